/**
 * Mastodon's media extensions in outgoing JSON-LD: an attachment's `blurhash` (toot:blurhash) and
 * `focalPoint` (toot:focalPoint, a list [x, y]), which Fedify's vocabulary does not have; and a
 * status's OStatus terms as Mastodon's NoteSerializer sends them (`atomUri`, `inReplyToAtomUri`,
 * `conversation`: threads group by the last), carried by MediaNote and MediaQuestion.
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
const OSTATUS = 'http://ostatus.org#';
const MEDIA_TERMS = { blurhash: 'toot:blurhash', focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' } } as const;
const OSTATUS_TERMS = { ostatus: OSTATUS, atomUri: 'ostatus:atomUri', inReplyToAtomUri: 'ostatus:inReplyToAtomUri', conversation: 'ostatus:conversation' } as const;

/** A status's OStatus terms (Mastodon's NoteSerializer): its own URI, its parent's, its thread's. */
export interface OStatusTerms {
  atomUri: string;
  inReplyToAtomUri: string | null;
  conversation: string | null;
}

function ostatusEntries(t: OStatusTerms): [keyof OStatusTerms, string][] {
  return (['atomUri', 'inReplyToAtomUri', 'conversation'] as const).flatMap((k) => (t[k] ? [[k, t[k]] as [keyof OStatusTerms, string]] : []));
}

/** Adds the terms to an expanded node (what a parent activity compacts). */
function expandOStatus(out: unknown, t: OStatusTerms | null): unknown {
  const node = (Array.isArray(out) ? out[0] : out) as Record<string, unknown> | undefined;
  if (node && t) for (const [k, v] of ostatusEntries(t)) node[`${OSTATUS}${k}`] = [{ '@value': v }];
  return out;
}

/** Adds the terms to a compacted document of the status itself, with their definitions. */
function compactOStatus(out: unknown, t: OStatusTerms | null): unknown {
  if (!t || !out || typeof out !== 'object' || Array.isArray(out)) return out;
  const doc = out as Record<string, unknown>;
  const context = doc['@context'];
  doc['@context'] = [...(Array.isArray(context) ? context : context == null ? [] : [context]), OSTATUS_TERMS];
  for (const [k, v] of ostatusEntries(t)) doc[k] = v;
  return doc;
}

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
  const media = text.includes('"toot:blurhash"') || text.includes('"toot:focalPoint"');
  // A Note's OStatus terms inside an activity come out as full IRIs under the default context.
  const ostatus = text.includes(`"${OSTATUS}`);
  if (!media && !ostatus) return first;
  const context = (first as Record<string, unknown>)['@context'];
  return toJsonLd({
    format: 'compact',
    contextLoader: options.contextLoader,
    context: [...(Array.isArray(context) ? context : [context]), ...(media ? [MEDIA_TERMS] : []), ...(ostatus ? [OSTATUS_TERMS] : [])] as never,
  });
}

type NoteValues = ConstructorParameters<typeof Note>[0];
type QuestionValues = ConstructorParameters<typeof Question>[0];

export class MediaNote extends Note {
  ostatus: OStatusTerms | null;

  constructor(values: NoteValues & { ostatus?: OStatusTerms | null }) {
    const { ostatus, ...rest } = values;
    super(rest);
    this.ostatus = ostatus ?? null;
  }

  // Fedify's clone makes a new instance from the id alone: the terms go with it.
  override clone(...args: Parameters<Note['clone']>): Note {
    const copy = super.clone(...args) as MediaNote;
    copy.ostatus = this.ostatus;
    return copy;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    if (options.format === 'expand') return expandOStatus(await super.toJsonLd(options), this.ostatus);
    return compactOStatus(await compactWithMediaTerms(options, (o) => super.toJsonLd(o)), this.ostatus);
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
  ostatus: OStatusTerms | null;

  constructor(values: QuestionValues & { ostatus?: OStatusTerms | null }) {
    const { ostatus, ...rest } = values;
    super(rest);
    this.ostatus = ostatus ?? null;
  }

  // Fedify's clone makes a new instance from the id alone: the terms go with it.
  override clone(...args: Parameters<Question['clone']>): Question {
    const copy = super.clone(...args) as MediaQuestion;
    copy.ostatus = this.ostatus;
    return copy;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    if (options.format === 'expand') return expandOStatus(await super.toJsonLd(options), this.ostatus);
    return compactOStatus(await compactWithMediaTerms(options, (o) => super.toJsonLd(o)), this.ostatus);
  }
}
