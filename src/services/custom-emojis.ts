/**
 * Custom emojis: the operator's own (`roost emojis …`: add, categorise, hide, disable, remove) and
 * the remote copies other servers' `Emoji` tags describe (persistRemoteEmojis, from the inbox).
 *
 * A local emoji's upload is never stored as sent: its type comes from the bytes (PNG, GIF, WebP),
 * sharp decodes it within `bodyLimits.maxImagePixels`, re-encodes the image (animated GIF and WebP
 * keep their frames; metadata goes) and makes the static PNG of its first frame; both go into
 * the media storage (services/media-storage.ts) under `custom_emojis/<id>/`. At most 256 KiB, as
 * Mastodon's CustomEmoji::LOCAL_LIMIT.
 */
import { logAdminAction } from './audit-log.ts';
import { uploadBytes, uploadSize, type Upload } from '../lib/upload.ts';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { SHORTCODE } from '../lib/emoji-shortcodes.ts';
import { safeHttpUrl } from '../lib/sanitize.ts';
import { mediaStorage } from './media-storage.ts';
import { sniffImage } from './media-store.ts';

/** Mastodon's CustomEmoji::LOCAL_LIMIT. */
export const EMOJI_MAX_BYTES = 256 * 1024;
const MAX_CATEGORY = 64;

function invalid(field: string, description: string, error = 'ERR_INVALID'): RoostError {
  const human = field.charAt(0).toUpperCase() + field.slice(1);
  return new RoostError(422, `Validation failed: ${human} ${description}`, { details: { [field]: [{ error, description }] } });
}

/** The category of that name (any case), created as written when there is none; '' or null: none. */
async function categoryId(services: Services, sql: Sql, name: string | null | undefined): Promise<string | null> {
  const trimmed = (name ?? '').trim();
  if (!trimmed) return null;
  if (trimmed.length > MAX_CATEGORY || /[\u0000-\u001f]/.test(trimmed)) throw invalid('category', 'is invalid');
  await sql.query(`insert into custom_emoji_categories (id, name, created_at) values ($1, $2, $3) on conflict (lower(name)) do nothing`, [
    services.ids.next(),
    trimmed,
    services.clock.now(),
  ]);
  const [row] = await sql.query<{ id: string }>(`select id::text from custom_emoji_categories where lower(name) = lower($1)`, [trimmed]);
  return row!.id;
}

export interface AddEmojiInput {
  shortcode: string;
  /** The image: read only once its size passed. */
  data: Upload;
  category?: string | null;
  visibleInPicker?: boolean;
}

/** Adds a local emoji; returns its id. A shortcode in use locally is a 422, and nothing is kept. */
export async function addCustomEmoji(services: Services, input: AddEmojiInput, by: string | null = null): Promise<string> {
  const shortcode = input.shortcode.trim();
  if (!SHORTCODE.test(shortcode)) throw invalid('shortcode', 'must be at least 2 characters and can only contain alphanumeric characters and underscores');
  if (uploadSize(input.data) > EMOJI_MAX_BYTES) throw invalid('image', 'must be less than 256 KB');
  const data = await uploadBytes(input.data);
  const sniffed = sniffImage(data);
  if (!sniffed || sniffed.ext === 'jpg') throw invalid('image', 'must be a PNG, GIF or WebP image');
  const maxPixels = services.config.bodyLimits.maxImagePixels;
  let original: Buffer;
  let still: Buffer;
  try {
    const meta = await sharp(data, { limitInputPixels: false }).metadata();
    if (!meta.width || !meta.height || meta.width * (meta.pageHeight ?? meta.height) > maxPixels) throw new Error('too many pixels');
    const animated = sharp(data, { animated: true, limitInputPixels: maxPixels });
    original = await (sniffed.ext === 'png' ? animated.png() : sniffed.ext === 'gif' ? animated.gif() : animated.webp()).toBuffer();
    still = await sharp(data, { limitInputPixels: maxPixels }).png().toBuffer();
  } catch {
    throw invalid('image', 'could not be processed');
  }
  const id = services.ids.next();
  const name = randomBytes(8).toString('hex');
  const imageKey = `custom_emojis/${id}/original/${name}.${sniffed.ext}`;
  const staticKey = `custom_emojis/${id}/static/${name}.png`;
  const storage = mediaStorage(services);
  await storage.put(imageKey, original);
  await storage.put(staticKey, still);
  try {
    await services.db.sql.transaction(async (sql) => {
      const [taken] = await sql.query(`select 1 from custom_emojis where domain is null and shortcode = $1`, [shortcode]);
      if (taken) throw invalid('shortcode', 'has already been taken', 'ERR_TAKEN');
      const category = await categoryId(services, sql, input.category);
      const now = services.clock.now();
      await sql.query(
        `insert into custom_emojis (id, shortcode, domain, image_key, static_key, category_id, visible_in_picker, created_at, updated_at)
         values ($1, $2, null, $3, $4, $5, $6, $7, $7)`,
        [id, shortcode, imageKey, staticKey, category, input.visibleInPicker ?? true, now],
      );
      await logAdminAction(services, sql, { actorAccountId: by, action: 'create', targetType: 'CustomEmoji', targetId: id, humanIdentifier: shortcode });
    });
  } catch (e) {
    await Promise.all([storage.delete(imageKey), storage.delete(staticKey)]);
    throw e;
  }
  return id;
}

/** A local emoji named by its shortcode (the CLI) or its id (the admin API). */
export type EmojiRef = string | { id: string };

async function localEmojiId(services: Services, ref: EmojiRef): Promise<string> {
  const byId = typeof ref !== 'string';
  const [row] = await services.db.sql.query<{ id: string }>(
    `select id::text from custom_emojis where domain is null and ${byId ? 'id = $1::bigint' : 'shortcode = $1'}`,
    [byId ? ref.id : ref],
  );
  if (!row) throw notFound(byId ? 'Record not found' : `No custom emoji :${ref}:`);
  return row.id;
}

/**
 * Changes a local emoji: disabled (not rendered, not listed), shown in the picker, its category by
 * name ('' or null: none; created when new) or by id (`categoryId`: an unknown one is a 422).
 */
export async function updateCustomEmoji(
  services: Services,
  shortcode: EmojiRef,
  change: { disabled?: boolean; visibleInPicker?: boolean; category?: string | null; categoryId?: string },
  by: string | null = null,
): Promise<void> {
  const id = await localEmojiId(services, shortcode);
  await services.db.sql.transaction(async (sql) => {
    if (change.categoryId !== undefined) {
      // (an id bigint cannot hold names no category: the same 422, never a cast error)
      const [known] = /^\d{1,19}$/.test(change.categoryId) && BigInt(change.categoryId) <= 9223372036854775807n
        ? await sql.query(`select 1 from custom_emoji_categories where id = $1::bigint`, [change.categoryId])
        : [];
      if (!known) throw invalid('category', 'does not exist');
      await sql.query(`update custom_emojis set category_id = $2 where id = $1`, [id, change.categoryId]);
    }
    const sets: string[] = ['updated_at = $2'];
    const params: unknown[] = [id, services.clock.now()];
    if (change.disabled !== undefined) sets.push(`disabled = $${params.push(change.disabled)}`);
    if (change.visibleInPicker !== undefined) sets.push(`visible_in_picker = $${params.push(change.visibleInPicker)}`);
    if (change.category !== undefined) sets.push(`category_id = $${params.push(await categoryId(services, sql, change.category))}`);
    const [row] = await sql.query<{ shortcode: string }>(`update custom_emojis set ${sets.join(', ')} where id = $1 returning shortcode`, params);
    const action = change.disabled === true ? 'disable' : change.disabled === false ? 'enable' : 'update';
    await logAdminAction(services, sql, { actorAccountId: by, action, targetType: 'CustomEmoji', targetId: id, humanIdentifier: row?.shortcode ?? null });
  });
}

/** Removes a local emoji and its files. */
export async function removeCustomEmoji(services: Services, shortcode: EmojiRef, by: string | null = null): Promise<void> {
  const id = await localEmojiId(services, shortcode);
  const row = await services.db.sql.transaction(async (sql) => {
    const [deleted] = await sql.query<{ image_key: string | null; static_key: string | null; shortcode: string }>(
      `delete from custom_emojis where id = $1 returning image_key, static_key, shortcode`,
      [id],
    );
    if (deleted) await logAdminAction(services, sql, { actorAccountId: by, action: 'destroy', targetType: 'CustomEmoji', targetId: id, humanIdentifier: deleted.shortcode });
    return deleted;
  });
  const storage = mediaStorage(services);
  for (const key of [row?.image_key, row?.static_key]) if (key) await storage.delete(key);
}

/** An `Emoji` tag of a remote Note or actor, as convert/from-as.ts reads it. */
export interface RemoteEmoji {
  shortcode: string;
  /** The icon's URL (http(s), checked on ingest). */
  url: string;
  /** The Emoji's id, when it has one. */
  uri: string | null;
  updated: Date | null;
}

/**
 * Stores (or refreshes) the remote copies of `domain`'s emojis, as Mastodon's process_emoji: a new
 * shortcode is added; a known one is changed when its image URL changed or its `updated` is newer
 * than the copy's. One statement whatever the count; never fails the activity.
 */
export async function persistRemoteEmojis(services: Services, domain: string, emojis: readonly RemoteEmoji[]): Promise<void> {
  const unique = [...new Map(emojis.filter((e) => SHORTCODE.test(e.shortcode) && safeHttpUrl(e.url)).map((e) => [e.shortcode, e])).values()];
  if (unique.length === 0) return;
  const now = services.clock.now();
  await services.db.sql.query(
    `insert into custom_emojis (id, shortcode, domain, uri, image_url, image_updated_at, created_at, updated_at)
     select x.id, x.shortcode, $1, x.uri, x.url, x.updated, $2, $2
       from unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) as x(id, shortcode, uri, url, updated)
     on conflict (shortcode, coalesce(domain, '')) do update
        set image_url = excluded.image_url, uri = excluded.uri, image_updated_at = excluded.image_updated_at, updated_at = excluded.updated_at
      where custom_emojis.image_url is distinct from excluded.image_url
         or (excluded.image_updated_at is not null and (custom_emojis.image_updated_at is null or excluded.image_updated_at > custom_emojis.image_updated_at))`,
    [
      domain,
      now,
      unique.map(() => services.ids.next()),
      unique.map((e) => e.shortcode),
      unique.map((e) => e.uri),
      unique.map((e) => safeHttpUrl(e.url)),
      unique.map((e) => e.updated),
    ],
  );
}
