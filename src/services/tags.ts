/**
 * Hashtags a user follows and features (Mastodon's TagFollow and FeaturedTag). A tag is one row of
 * `tags` whatever the case it is written in (unique on lower(name)); it keeps the spelling of its
 * first use, which is how it is displayed. Following a tag feeds the home timeline
 * (effects/tag-feeds.ts); featuring one shows it on the profile and in the actor's `featuredTags`
 * collection. Each use case is one transaction: a refused feature writes nothing, not even the tag.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';

/** Mastodon's Tag::HASHTAG_NAME_RE, as Roost reads hashtags (text-format.ts): at least one letter. */
const TAG_NAME = /^[\p{L}\p{M}\p{N}_]*[\p{L}\p{M}][\p{L}\p{M}\p{N}_]*$/u;
const MAX_TAG_NAME = 255;

/** A tag name as a client sends it ("#Cats", " cats "), or null when no hashtag can be so named. */
export function tagName(raw: string | undefined | null): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.trim().replace(/^#/, '');
  return name.length > 0 && name.length <= MAX_TAG_NAME && TAG_NAME.test(name) ? name : null;
}

/** The tag named `name` (any case), or null. */
export async function findTag(services: Services, name: string): Promise<{ id: string; name: string } | null> {
  const [row] = await services.db.sql.query<{ id: string; name: string }>(`select id::text, name from tags where lower(name) = lower($1)`, [name]);
  return row ?? null;
}

/** The tag named `name` (any case), created as written when there is none (in the caller's transaction). */
export async function findOrCreateTag(services: Services, sql: Sql, name: string): Promise<{ id: string; name: string }> {
  await sql.query(`insert into tags (id, name, created_at) values ($1, $2, $3) on conflict (lower(name)) do nothing`, [
    services.ids.next(),
    name,
    services.clock.now(),
  ]);
  const [row] = await sql.query<{ id: string; name: string }>(`select id::text, name from tags where lower(name) = lower($1)`, [name]);
  return row!;
}

function requireTagName(raw: string | undefined): string {
  const name = tagName(raw);
  // As Mastodon's TagsController: a name no hashtag can have names nothing.
  if (!name) throw notFound();
  return name;
}

/** Follows the tag (again: nothing more). Returns the tag's id. */
export async function followTag(services: Services, accountId: string, rawName: string | undefined): Promise<string> {
  const name = requireTagName(rawName);
  return services.db.sql.transaction(async (sql) => {
    const tag = await findOrCreateTag(services, sql, name);
    await sql.query(
      `insert into tag_follows (id, account_id, tag_id, created_at) values ($1, $2, $3, $4) on conflict (account_id, tag_id) do nothing`,
      [services.ids.next(), accountId, tag.id, services.clock.now()],
    );
    return tag.id;
  });
}

/** Stops following the tag (not followed, or no such tag: nothing). Returns the tag's id, null when there is no tag. */
export async function unfollowTag(services: Services, accountId: string, rawName: string | undefined): Promise<string | null> {
  const tag = await findTag(services, requireTagName(rawName));
  if (!tag) return null;
  await services.db.sql.query(`delete from tag_follows where account_id = $1 and tag_id = $2`, [accountId, tag.id]);
  return tag.id;
}

/** Mastodon's error for one featured tag over the maximum (featured_tags.errors.limit). */
function limitError(): RoostError {
  const description = 'You have already featured the maximum number of hashtags';
  return new RoostError(422, `Validation failed: ${description}`, { details: { base: [{ error: 'ERR_INVALID', description }] } });
}

/**
 * Features a tag on the account's profile (Mastodon's CreateFeaturedTagService): an invalid name
 * is a 422 "Validation failed: Name is invalid"; a tag featured already is answered as it is (both
 * POST /api/v1/featured_tags and the 4.4 tags API are idempotent there); more than
 * `accounts.maxFeaturedTags` is refused and writes nothing. Returns the featured tag's id and its
 * tag's id.
 */
export async function featureTag(services: Services, accountId: string, rawName: string | undefined): Promise<{ id: string; tagId: string }> {
  const name = tagName(rawName);
  if (!name) {
    const description = rawName === undefined || rawName.trim() === '' ? "can't be blank" : 'is invalid';
    throw new RoostError(422, `Validation failed: Name ${description}`, { details: { name: [{ error: description === 'is invalid' ? 'ERR_INVALID' : 'ERR_BLANK', description }] } });
  }
  const max = services.config.limits.accounts.maxFeaturedTags;
  return services.db.sql.transaction(async (sql) => {
    // Two features at once must not both pass the limit: the account's row is the lock.
    await sql.query(`select id from accounts where id = $1 for update`, [accountId]);
    const [known] = await sql.query<{ id: string; tag_id: string }>(
      `select ft.id::text, ft.tag_id::text from featured_tags ft join tags t on t.id = ft.tag_id where ft.account_id = $1 and lower(t.name) = lower($2)`,
      [accountId, name],
    );
    if (known) return { id: known.id, tagId: known.tag_id };
    const [count] = await sql.query<{ n: number }>(`select count(*)::int as n from featured_tags where account_id = $1`, [accountId]);
    if ((count?.n ?? 0) >= max) throw limitError();
    const tag = await findOrCreateTag(services, sql, name);
    const id = services.ids.next();
    await sql.query(`insert into featured_tags (id, account_id, tag_id, created_at) values ($1, $2, $3, $4)`, [id, accountId, tag.id, services.clock.now()]);
    return { id, tagId: tag.id };
  });
}

/** Stops featuring the tag named `rawName` (not featured: nothing). Returns the tag's id, null when there is no tag. */
export async function unfeatureTag(services: Services, accountId: string, rawName: string | undefined): Promise<string | null> {
  const tag = await findTag(services, requireTagName(rawName));
  if (!tag) return null;
  await services.db.sql.query(`delete from featured_tags where account_id = $1 and tag_id = $2`, [accountId, tag.id]);
  return tag.id;
}

/** Removes one of the account's featured tags by its id (another's, or none: 404). */
export async function removeFeaturedTag(services: Services, accountId: string, id: string): Promise<void> {
  const removed = await services.db.sql.query(`delete from featured_tags where id = $1 and account_id = $2 returning id`, [id, accountId]);
  if (removed.length === 0) throw notFound();
}
