/**
 * Custom emojis on the read side: the enabled ones a set of texts names, for a page of statuses or
 * accounts, in ONE statement (only when some text names one: a page without `:shortcodes:` costs
 * nothing), and the local emojis of the picker (GET /api/v1/custom_emojis).
 */
import type { Services } from '../../context.ts';
import { emojiKey, serializeCustomEmoji, type CustomEmojiRow } from '../../serializers/custom-emoji.ts';
import { mediaStorage } from '../media-storage.ts';
import { emojiShortcodes } from '../../lib/emoji-shortcodes.ts';
import { newestFirst, pageSql, type PageParams } from './page.ts';
import type { PollRow } from '../../serializers/poll.ts';

const COLUMNS = `e.id::text, e.shortcode, e.domain, e.image_key, e.static_key, e.image_url, e.visible_in_picker, c.name as category, e.updated_at`;

type Row = { id: string; shortcode: string; domain: string | null; image_key: string | null; static_key: string | null; image_url: string | null; visible_in_picker: boolean; category: string | null; updated_at: string | Date };

function fromRow(r: Row): CustomEmojiRow {
  return {
    id: r.id,
    shortcode: r.shortcode,
    domain: r.domain,
    imageKey: r.image_key,
    staticKey: r.static_key,
    imageUrl: r.image_url,
    visibleInPicker: r.visible_in_picker,
    category: r.category,
    updatedAt: new Date(r.updated_at),
  };
}

/** One owner's wish: the shortcodes its texts name, on its author's domain (null: local). */
export interface EmojiWish {
  owner: string;
  domain: string | null;
  shortcodes: string[];
}

/**
 * The enabled emojis each owner's texts name (Mastodon's CustomEmoji.from_text: same shortcode,
 * the author's domain, not disabled), by owner, in the order named. One statement, none when
 * nothing is named.
 */
export async function loadEmojisFor(services: Services, wishes: readonly EmojiWish[]): Promise<Map<string, CustomEmojiRow[]>> {
  const out = new Map<string, CustomEmojiRow[]>();
  const pairs = new Map<string, { domain: string; shortcode: string }>();
  for (const w of wishes) for (const sc of w.shortcodes) pairs.set(emojiKey(w.domain, sc), { domain: w.domain ?? '', shortcode: sc });
  if (pairs.size === 0) return out;
  const list = [...pairs.values()];
  const rows = await services.db.sql.query<Row>(
    `select ${COLUMNS} from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id
       join unnest($1::text[], $2::text[]) as w(domain, shortcode) on e.shortcode = w.shortcode and coalesce(e.domain, '') = w.domain
      where not e.disabled and (e.image_key is not null or e.image_url is not null)`,
    [list.map((p) => p.domain), list.map((p) => p.shortcode)],
  );
  const found = new Map(rows.map((r) => [emojiKey(r.domain, r.shortcode), fromRow(r)]));
  for (const w of wishes) {
    const mine = w.shortcodes.flatMap((sc) => found.get(emojiKey(w.domain, sc)) ?? []);
    if (mine.length) out.set(w.owner, mine);
  }
  return out;
}

/** The local emojis of the picker: enabled and visible in it (Mastodon's CustomEmoji.listed), by shortcode. */
export async function listedEmojis(services: Services): Promise<CustomEmojiRow[]> {
  const rows = await services.db.sql.query<Row>(
    `select ${COLUMNS} from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id
      where e.domain is null and not e.disabled and e.visible_in_picker order by lower(e.shortcode), e.shortcode`,
  );
  return rows.map(fromRow);
}

/** Every local emoji (the operator's list), optionally of one category (by name, any case). */
export async function localEmojis(services: Services, category?: string | null): Promise<(CustomEmojiRow & { disabled: boolean })[]> {
  const rows = await services.db.sql.query<Row & { disabled: boolean }>(
    `select ${COLUMNS}, e.disabled from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id
      where e.domain is null and ($1::text is null or lower(c.name) = lower($1)) order by lower(e.shortcode), e.shortcode`,
    [category ?? null],
  );
  return rows.map((r) => ({ ...fromRow(r), disabled: r.disabled }));
}

/** A local emoji as an outgoing `Emoji` tag is made of (federation/convert/to-as-emojis-tags.ts). */
export function emojiFacts(services: Services, e: CustomEmojiRow): { uri: string; shortcode: string; url: string; updatedAt: Date } {
  return { uri: `${services.config.publicUrl}/emojis/${e.id}`, shortcode: e.shortcode, url: serializeCustomEmoji(e, mediaStorage(services).baseUrl).url, updatedAt: e.updatedAt };
}

/** The shortcodes an account's display name, bio and fields name (Mastodon's Account#emojis). */
export function accountEmojiShortcodes(a: { displayName: string; note: string; fields: { name: string; value: string }[] }): string[] {
  return emojiShortcodes(a.displayName, a.note, ...a.fields.flatMap((f) => [f.name, f.value]));
}

/** An enabled local emoji by id (what `/emojis/ID` serves to peers), or null. */
export async function localEmojiById(services: Services, id: string): Promise<CustomEmojiRow | null> {
  if (!/^\d{1,19}$/.test(id)) return null;
  const [row] = await services.db.sql.query<Row>(
    `select ${COLUMNS} from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id
      where e.id = $1::bigint and e.domain is null and not e.disabled`,
    [id],
  );
  return row ? fromRow(row) : null;
}

/** A local emoji as the admin API shows it: with its state and dates. */
export type AdminEmojiRow = CustomEmojiRow & { disabled: boolean; categoryId: string | null; createdAt: Date };

const ADMIN_COLUMNS = `${COLUMNS}, e.disabled, e.category_id::text, e.created_at`;
type AdminRow = Row & { disabled: boolean; category_id: string | null; created_at: string | Date };
const adminFromRow = (r: AdminRow): AdminEmojiRow => ({ ...fromRow(r), disabled: r.disabled, categoryId: r.category_id, createdAt: new Date(r.created_at) });

/** A page of the local emojis by id, newest first (the admin API's list). */
export async function adminEmojisPage(services: Services, p: PageParams): Promise<AdminEmojiRow[]> {
  const page = pageSql('e.id', p, 1);
  const rows = await services.db.sql.query<AdminRow>(
    `select ${ADMIN_COLUMNS} from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id
      where e.domain is null${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return newestFirst(rows, p).map(adminFromRow);
}

/** One local emoji by id (disabled ones too), or null. */
export async function adminEmoji(services: Services, id: string): Promise<AdminEmojiRow | null> {
  const [row] = await services.db.sql.query<AdminRow>(
    `select ${ADMIN_COLUMNS} from custom_emojis e left join custom_emoji_categories c on c.id = e.category_id where e.id = $1::bigint and e.domain is null`,
    [id],
  );
  return row ? adminFromRow(row) : null;
}

/** The custom emojis one poll's options use (GET /api/v1/polls/:id): nothing asked when they name none. */
export async function emojisOfPoll(services: Services, poll: PollRow): Promise<CustomEmojiRow[]> {
  const shortcodes = emojiShortcodes(...poll.options);
  if (shortcodes.length === 0) return [];
  const [author] = await services.db.sql.query<{ domain: string | null }>(`select domain from accounts where id = $1`, [poll.accountId]);
  return (await loadEmojisFor(services, [{ owner: poll.id, domain: author?.domain ?? null, shortcodes }])).get(poll.id) ?? [];
}
