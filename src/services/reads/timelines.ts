/**
 * Timelines on the read side: pages of status ids for home, public and hashtag timelines, newest
 * first, rendered afterwards by the one batched status view (reads/statuses.ts loadStatusPage).
 * Each page is ONE statement whatever its size.
 *
 * Home is fan-out on write: effects/home-feeds.ts pushes followed accounts' statuses into
 * `home_feeds` after commit (migration Migration20261123192000_home_feeds), and the page is a walk
 * down that index with every rule checked on the rows it meets, so a block, a mute, an unfollow or
 * a `reblogs: false` takes effect on the next read. The rules are Mastodon's
 * FeedManager#filter_from_home? ({@link homeFilterSql}), reusable for list timelines.
 *
 * Public and hashtag timelines are Mastodon's PublicFeed and TagFeed: public statuses that are
 * not reblogs, from accounts neither suspended nor silenced, minus what the viewer excludes
 * (blocks either way, live mutes, and for remote statuses their domain blocks).
 */
import type { Services } from '../../context.ts';
import { newestFirst, pageSql, type PageParams } from './page.ts';
import { hasMediaSql } from './media.ts';
import { prepared } from '../../db/prepared.ts';
import { blockedEitherWaySql, blocksSql, domainBlockedBySql, mutedBySql } from '../../db/audience.ts';


/**
 * SQL, true when the author `a` (a bigint SQL expression) may show on a timeline: not suspended
 * (nor silenced, with `silenced`), and for a viewer `v`: not blocking `v` nor blocked by it, not
 * muted by it until `now` (Mastodon's excluded_from_timeline_account_ids), not on a domain it
 * blocks (unless `domainBlocks` is false). One scalar sub-select on the account's primary key:
 * PostgreSQL keeps it a per-row probe (it cannot turn it into a join or a hash over all accounts)
 * and plans it on its own, which keeps planning cheap for statements planned on every request.
 */
export function authorShownSql(a: string, v: string | null, now: string | null, opts: { silenced?: boolean; domainBlocks?: boolean } = {}): string {
  const checks = [`xa.suspended_at is null`];
  if (opts.silenced) checks.push(`xa.silenced_at is null`);
  if (v !== null) {
    if (opts.domainBlocks !== false) {
      checks.push(`(xa.domain is null or not ${domainBlockedBySql(v, 'xa.domain')})`);
    }
    checks.push(`not ${blockedEitherWaySql(v, 'xa.id')}`);
    checks.push(`not ${mutedBySql(v, 'xa.id', now!)}`);
  }
  return `coalesce((select ${checks.join(' and ')} from accounts xa where xa.id = ${a}), false)`;
}

/** SQL: the viewer `v` blocks or (until `now`) mutes the account `a`. */
function blocksOrMutesSql(a: string, v: string, now: string): string {
  return `(${blocksSql(v, a)} or ${mutedBySql(v, a, now)})`;
}

/**
 * SQL: the status `s` (by another account) belongs in `v`'s home (or list) feed now, as
 * Mastodon's FeedManager#filter_from_home? decides, plus its status policy. The statement joins
 * `f`, the viewer's accepted follow of the author (`follows f on f.account_id = v and
 * f.target_account_id = s.account_id and f.state = 'accepted'`), and left-joins `o`, the
 * reblogged original (`statuses o on o.id = s.reblog_of_id`):
 *   - a reblog only if the follow shows reblogs and the viewer may see the original; a status in
 *     a language the follow does not ask for is left out;
 *   - direct and limited statuses only when they mention `v` (private ones reach followers);
 *   - neither author suspended, blocking `v`, blocked or muted by `v`, or on a domain `v` blocks;
 *     nobody mentioned (silent mentions aside) blocked or muted by `v`;
 *   - a reply only if it is to the author, to `v`, or to an account `v` follows.
 * `now` is the mute-expiry instant (a timestamptz SQL expression). Written with few sub-plans:
 * the statement is planned on every request.
 */
export function homeFilterSql(s: string, o: string, f: string, v: string, now: string): string {
  return `(${s}.deleted_at is null
    and (${s}.reblog_of_id is null or (${f}.show_reblogs and ${o}.deleted_at is null
      and (${o}.visibility in ('public', 'unlisted') or ${o}.account_id = ${v}
        or (${o}.visibility = 'private' and exists (select 1 from follows of where of.account_id = ${v} and of.target_account_id = ${o}.account_id and of.state = 'accepted'))
        or exists (select 1 from mentions om where om.status_id = ${o}.id and om.account_id = ${v}))))
    and (${f}.languages is null or cardinality(${f}.languages) = 0 or ${s}.language is null or ${s}.language = any(${f}.languages))
    and (${s}.visibility in ('public', 'unlisted', 'private') or exists (select 1 from mentions sm where sm.status_id = ${s}.id and sm.account_id = ${v}))
    and ${authorShownSql(`${s}.account_id`, v, now)}
    and (${s}.reblog_of_id is null or ${authorShownSql(`${o}.account_id`, v, now)})
    and (select count(*) from mentions hm where hm.status_id in (${s}.id, ${s}.reblog_of_id) and not hm.silent and ${blocksOrMutesSql('hm.account_id', v, now)}) = 0
    and (${s}.in_reply_to_id is null or ${s}.in_reply_to_account_id in (${s}.account_id, ${v})
      or exists (select 1 from follows hr where hr.account_id = ${v} and hr.target_account_id = ${s}.in_reply_to_account_id and hr.state = 'accepted')))`;
}

/**
 * SQL: the status `s` is in `v`'s home because `v` follows one of its hashtags (effects/tag-feeds.ts),
 * not its author (those go through {@link homeFilterSql}): still public, not a reblog, its author
 * neither silenced nor suspended, `v` still follows one of its tags, and as Mastodon's
 * FeedManager#filter_from_tags?: nobody it mentions nor its author blocked or muted by `v`, the
 * author not blocking `v`, not on a domain `v` blocks.
 */
export function tagFollowedSql(s: string, v: string, now: string): string {
  return `(${s}.deleted_at is null and ${s}.visibility = 'public' and ${s}.reblog_of_id is null and ${s}.account_id <> ${v}
    and not exists (select 1 from follows tff where tff.account_id = ${v} and tff.target_account_id = ${s}.account_id and tff.state = 'accepted')
    and exists (select 1 from statuses_tags tst join tag_follows ttf on ttf.tag_id = tst.tag_id where tst.status_id = ${s}.id and ttf.account_id = ${v})
    and ${authorShownSql(`${s}.account_id`, v, now, { silenced: true })}
    and not exists (select 1 from mentions tm where tm.status_id = ${s}.id and not tm.silent and ${blocksOrMutesSql('tm.account_id', v, now)}))`;
}

export interface TimelinePage {
  statusIds: string[];
}

/**
 * SQL: the author of `s` is a member of one of `v`'s exclusive lists, whose posts stay out of
 * `v`'s home (Mastodon 4.2's `exclusive`). Checked when home is read rather than left out at
 * fan-out (as Mastodon does): like every other home rule here, it then holds at once when a list
 * becomes exclusive, gains or loses a member, or goes, with nothing in home_feeds to undo; the cost
 * is one probe of list_accounts (account_id, list_id) per row met, inside the same one statement.
 */
export function inExclusiveListSql(s: string, v: string): string {
  // The first, uncorrelated test is planned once per statement (an InitPlan): a reader without an
  // exclusive list, nearly everyone, pays nothing per row.
  return `(exists (select 1 from lists xl0 where xl0.account_id = ${v} and xl0.exclusive)
    and exists (select 1 from list_accounts xla join lists xl on xl.id = xla.list_id
      where xla.account_id = ${s}.account_id and xl.account_id = ${v} and xl.exclusive))`;
}

/**
 * A page of `viewerId`'s home timeline: the feed's statuses that pass {@link homeFilterSql} (and
 * are not by a member of one of the viewer's exclusive lists), those there by a followed hashtag
 * ({@link tagFollowedSql}), and
 * the viewer's own statuses (taken from statuses directly, so a post is on its author's home at
 * once; a reblog while its original is there and its author neither suspended nor blocking),
 * newest first.
 */
export async function homeTimelinePage(services: Services, viewerId: string, p: PageParams): Promise<TimelinePage> {
  const feedPage = pageSql('hf.status_id', p, 3);
  const rows = await services.db.sql.query<{ id: string }>(homeSql(p), [viewerId, services.clock.now(), ...feedPage.params]);
  return { statusIds: newestFirst(rows, p).map((r) => r.id) };
}

/** The home statement's texts by page shape (which cursors, the limit): a few dozen at most, named prepared statements. */
const homeTexts = new Map<string, string>();

function homeSql(p: PageParams): string {
  const key = `${p.maxId ? 'M' : ''}${p.sinceId ? 'S' : ''}${p.minId ? 'm' : ''}${p.limit}`;
  let text = homeTexts.get(key);
  if (text !== undefined) return text;
  const feedPage = pageSql('hf.status_id', p, 3);
  const ownPage = pageSql('s.id', p, 3);
  text = prepared(
    `select x.id::text from (
       (select hf.status_id as id from home_feeds hf
          join statuses s on s.id = hf.status_id
          join follows f on f.account_id = $1 and f.target_account_id = s.account_id and f.state = 'accepted'
          left join statuses o on o.id = s.reblog_of_id
         where hf.account_id = $1${feedPage.where} and ${homeFilterSql('s', 'o', 'f', '$1::bigint', '$2::timestamptz')}
           and not ${inExclusiveListSql('s', '$1::bigint')}
         order by ${feedPage.order} limit ${p.limit})
       union all
       (select hf.status_id as id from tag_home_feeds hf join statuses s on s.id = hf.status_id
         where hf.account_id = $1${feedPage.where} and ${tagFollowedSql('s', '$1::bigint', '$2::timestamptz')}
         order by ${feedPage.order} limit ${p.limit})
       union all
       (select s.id from statuses s left join statuses o on o.id = s.reblog_of_id
         where s.account_id = $1${ownPage.where} and s.deleted_at is null
           and (s.reblog_of_id is null or (o.deleted_at is null and ${authorShownSql('o.account_id', '$1::bigint', '$2::timestamptz')}))
         order by ${ownPage.order} limit ${p.limit})
     ) x order by ${p.minId ? 'x.id asc' : 'x.id desc'} limit ${p.limit}`,
  );
  homeTexts.set(key, text);
  return text;
}

export interface PublicFilter {
  /** Only local statuses (`local=true` without `remote=true`). */
  local?: boolean;
  /** Only remote statuses (`remote=true` without `local=true`). */
  remote?: boolean;
  onlyMedia?: boolean;
}

/** Mastodon's cap on the any[], all[] and none[] tag lists (TagFeed::LIMIT). */
export const TAG_LIST_LIMIT = 4;

export interface TagFilter extends PublicFilter {
  /** The path's hashtag (case-insensitive). */
  tag: string;
  any?: string[];
  all?: string[];
  none?: string[];
}

/** Parameters of one statement, numbered as they are added. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    return `$${this.values.push(v)}`;
  }
}

/** The public-feed conditions shared by the public and hashtag timelines. */
function publicWhere(services: Services, f: PublicFilter, viewerId: string | null, params: Params): string[] {
  const where = [
    `s.visibility = 'public'`,
    `s.reblog_of_id is null`,
    `s.deleted_at is null`,
  ];
  const localOnly = f.local && !f.remote;
  const remoteOnly = f.remote && !f.local;
  if (localOnly) where.push('s.local');
  if (remoteOnly) where.push('not s.local');
  if (f.onlyMedia) where.push(hasMediaSql('s'));
  const v = viewerId ? `${params.add(viewerId)}::bigint` : null;
  const now = viewerId ? `${params.add(services.clock.now())}::timestamptz` : null;
  // Mastodon leaves domain blocks out of a local-only page (local accounts have no domain).
  where.push(authorShownSql('s.account_id', v, now, { silenced: true, domainBlocks: !localOnly }));
  return where;
}

async function publicPage(services: Services, where: string[], params: Params, p: PageParams): Promise<TimelinePage> {
  const page = pageSql('s.id', p, params.values.length + 1);
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s where ${where.join(' and ')}${page.where} order by ${page.order} limit ${p.limit}`,
    [...params.values, ...page.params],
  );
  return { statusIds: newestFirst(rows, p).map((r) => r.id) };
}

/** A page of the public timeline (replies to others left out, as Mastodon's public feed). */
export async function publicTimelinePage(services: Services, viewerId: string | null, p: PageParams, f: PublicFilter): Promise<TimelinePage> {
  const params = new Params();
  const where = publicWhere(services, f, viewerId, params);
  where.push(`(s.in_reply_to_id is null or s.in_reply_to_account_id = s.account_id)`);
  return publicPage(services, where, params, p);
}

/** What a hashtag may hold (letters, marks, digits, underscores, middle dots): anything else names no tag. */
const TAG_NAME = /^[\p{L}\p{M}\p{N}_\u00b7\u200c]+$/u;

/** A tag name as TagFeed matches it: without a leading '#', lower-cased; null if no tag can have it. */
function tagName(raw: string): string | null {
  const name = raw.replace(/^#/, '').trim().toLowerCase();
  return TAG_NAME.test(name) ? name : null;
}

/** Tag names of any[] / all[] / none[]: at most TAG_LIST_LIMIT, the first ones given; `invalid` if one names no tag. */
function tagNames(raws: readonly string[] | undefined): { names: string[]; invalid: boolean } {
  const given = (raws ?? []).filter((r) => r.trim() !== '').slice(0, TAG_LIST_LIMIT).map(tagName);
  return { names: [...new Set(given.filter((n): n is string => n !== null))], invalid: given.includes(null) };
}

/** A page of a hashtag timeline: the tag or any of `any`, all of `all`, none of `none`. */
export async function tagTimelinePage(services: Services, viewerId: string | null, p: PageParams, f: TagFilter): Promise<TimelinePage> {
  const first = tagName(f.tag);
  const allOf = tagNames(f.all);
  // A tag no status can have: nothing has it (or all of a list that holds it).
  if (first === null || allOf.invalid) return { statusIds: [] };
  const anyOf = tagNames(f.any).names;
  const noneOf = tagNames(f.none).names;
  const params = new Params();
  const tagged = (names: string[]) =>
    `exists (select 1 from statuses_tags st join tags t on t.id = st.tag_id where st.status_id = s.id and lower(t.name) = any(${params.add(names)}::text[]))`;
  const where = publicWhere(services, f, viewerId, params);
  where.push(tagged([first, ...anyOf]));
  if (allOf.names.length) {
    where.push(`(select count(distinct lower(t.name)) from statuses_tags st join tags t on t.id = st.tag_id
      where st.status_id = s.id and lower(t.name) = any(${params.add(allOf.names)}::text[])) = ${allOf.names.length}`);
  }
  if (noneOf.length) where.push(`not ${tagged(noneOf)}`);
  return publicPage(services, where, params, p);
}
