/**
 * Mastodon's media extensions in outgoing JSON-LD: an attachment's `blurhash` (toot:blurhash) and
 * `focalPoint` (toot:focalPoint, a list [x, y]), which Fedify's vocabulary does not have.
 *
 * - MediaDocument: a Document that adds both to its expanded form, so they are in every document
 *   built from it (and covered by the object integrity proof, which is made from the same JSON).
 * - MediaNote, MediaQuestion, MediaCreate, MediaUpdate: compacted (also when served by the object dispatcher,
 *   which asks for no format) with Fedify's default context plus the two
 *   term definitions (as Mastodon's own context has them), so peers that read plain JSON
 *   (Mastodon does) find `blurhash` and `focalPoint`, not `toot:blurhash`. Without a media
 *   extension in the document nothing changes (the default context alone). Roost's delivery
 *   (federation/delivery.ts) sends the JSON made here as it is; Fedify's own sendActivity (which
 *   Roost does not use) would parse and re-serialize it with its vocabulary, dropping both.
 */
import { Create, Document, Note, Question, Update } from '@fedify/vocab';

const TOOT = 'http://joinmastodon.org/ns#';
const MEDIA_TERMS = { blurhash: 'toot:blurhash', focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' } } as const;

type DocumentValues = ConstructorParameters<typeof Document>[0];
type ToJsonLdOptions = NonNullable<Parameters<Document['toJsonLd']>[0]>;

export class MediaDocument extends Document {
  readonly blurhash: string | null;
  readonly focalPoint: readonly [number, number] | null;

  constructor(values: DocumentValues & { blurhash?: string | null; focalPoint?: readonly [number, number] | null }) {
    const { blurhash, focalPoint, ...rest } = values;
    super(rest);
    this.blurhash = blurhash ?? null;
    this.focalPoint = focalPoint ?? null;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    const out = await super.toJsonLd(options);
    if (options.format !== 'expand') return out;
    const node = (Array.isArray(out) ? out[0] : out) as Record<string, unknown> | undefined;
    if (node) {
      if (this.blurhash) node[`${TOOT}blurhash`] = [{ '@value': this.blurhash }];
      if (this.focalPoint) node[`${TOOT}focalPoint`] = [{ '@list': this.focalPoint.map((v) => ({ '@value': v })) }];
    }
    return out;
  }
}

/**
 * Compacts with the default context plus MEDIA_TERMS when the document uses them. `options` may be
 * a Fedify Context (the object dispatcher passes one, without a format: compact JSON then), so
 * only the loaders are taken from it.
 */
async function compactWithMediaTerms(options: ToJsonLdOptions, toJsonLd: (o: ToJsonLdOptions) => Promise<unknown>): Promise<unknown> {
  const first = await toJsonLd(options);
  if ((options.format !== 'compact' && options.format != null) || options.context || !first || typeof first !== 'object') return first;
  const text = JSON.stringify(first);
  if (!text.includes('"toot:blurhash"') && !text.includes('"toot:focalPoint"')) return first;
  const context = (first as Record<string, unknown>)['@context'];
  return toJsonLd({
    format: 'compact',
    contextLoader: options.contextLoader,
    context: [...(Array.isArray(context) ? context : [context]), MEDIA_TERMS] as never,
  });
}

export class MediaNote extends Note {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return compactWithMediaTerms(options, (o) => super.toJsonLd(o));
  }
}

export class MediaCreate extends Create {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return compactWithMediaTerms(options, (o) => super.toJsonLd(o));
  }
}

export class MediaUpdate extends Update {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return compactWithMediaTerms(options, (o) => super.toJsonLd(o));
  }
}

export class MediaQuestion extends Question {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return compactWithMediaTerms(options, (o) => super.toJsonLd(o));
  }
}
