/**
 * Search on the read side (GET /api/v2/search): pages of ids, each ONE statement, rendered by the
 * usual batched views.
 *
 * Statuses: full text in PostgreSQL (the generated `statuses.search_vector`, GIN-indexed: see its
 * migration for the `simple` configuration) over the statuses the searcher may find, as Mastodon's
 * StatusesIndex and PublicStatusesIndex: their own, those mentioning them, their favourites and
 * bookmarks (the library), and the public statuses of accounts that opted into search
 * (`indexable`); never a reblog, and only what they may see (reads/statuses.ts visibleSql) from
 * accounts they do not block, mute or hide by domain. Ranked by ts_rank weighed by age (a status a
 * month old counts half of a new one), newest first among equals; with no words to match, newest
 * first. Operators from lib/search-query.ts.
 *
 * Accounts: by username or display name prefix (`user@domain` matching the domain by prefix),
 * an exact username first, then the accounts the searcher follows, local before remote.
 * Hashtags: by name prefix, the exact name first, then the shortest.
 */
import type { Services } from '../../context.ts';
import { accountsHiddenFromSql, domainBlockedBySql } from '../../db/audience.ts';
import { parseAcct } from '../../lib/acct.ts';
import { searchDate, type ParsedSearch } from '../../lib/search-query.ts';
import { visibleSql } from './statuses.ts';
import { isId } from './page.ts';
import { prepared } from '../../db/prepared.ts';

export interface StatusSearch {
  viewerId: string;
  query: ParsedSearch;
  /** Only statuses by this account (account_id). */
  accountId: string | null;
  maxId: string | null;
  minId: string | null;
  limit: number;
  offset: number;
}

const DAY_MS = 86_400_000;
/** A status this many days old ranks half of a new one with the same words. */
const HALF_RANK_DAYS = 30;

function escLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The accounts `from:` operators name, by term (`me`, `user`, `user@domain`; the local domain
 * means local): one statement for them all; an unknown one is missing from the map.
 */
async function fromAccounts(services: Services, viewerId: string, terms: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted: { term: string; username: string; domain: string | null }[] = [];
  for (const term of terms) {
    if (term.toLowerCase() === 'me') out.set(term, viewerId);
    else {
      const h = parseAcct(term, services.config.domain);
      if (h) wanted.push({ term, username: h.username.toLowerCase(), domain: h.domain?.toLowerCase() ?? null });
    }
  }
  if (wanted.length === 0) return out;
  const rows = await services.db.sql.query<{ id: string; username: string; domain: string | null }>(
    `select a.id::text, lower(a.username) as username, lower(a.domain) as domain from accounts a
       join unnest($1::text[], $2::text[]) w(u, d) on lower(a.username) = w.u and coalesce(lower(a.domain), '') = w.d`,
    [wanted.map((w) => w.username), wanted.map((w) => w.domain ?? '')],
  );
  for (const w of wanted) {
    const r = rows.find((x) => x.username === w.username && (x.domain ?? null) === w.domain);
    if (r) out.set(w.term, r.id);
  }
  return out;
}

/** A page of status ids, best first. */
export async function searchStatusIds(services: Services, s: StatusSearch): Promise<string[]> {
  const q = s.query;
  const params: unknown[] = [s.viewerId, q.tsquery, q.excluded, services.clock.now()];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where: string[] = [];
  const froms = q.filters.filter((f) => f.kind === 'from');
  const known = froms.length > 0 ? await fromAccounts(services, s.viewerId, froms.map((f) => f.term)) : new Map<string, string>();
  for (const f of q.filters) {
    const not = f.negated ? 'not ' : '';
    switch (f.kind) {
      case 'from': {
        const id = known.get(f.term);
        // An unknown account: nothing is from it (Mastodon searches for an id no account has).
        if (id === undefined) {
          if (!f.negated) return [];
        } else where.push(`s.account_id ${f.negated ? '<>' : '='} ${p(id)}::bigint`);
        break;
      }
      case 'has': {
        const media = (types: string[]) => `exists (select 1 from media_attachments hm where hm.status_id = s.id${types.length ? ` and hm.type = any(${p(types)}::text[])` : ''})`;
        const card = (video: boolean) => `exists (select 1 from preview_cards_statuses hc${video ? ` join preview_cards hp on hp.id = hc.preview_card_id and hp.type = 'video'` : ''} where hc.status_id = s.id)`;
        const sql = {
          media: () => media([]),
          image: () => media(['image']),
          video: () => media(['video', 'gifv']),
          audio: () => media(['audio']),
          poll: () => `exists (select 1 from polls hpo where hpo.status_id = s.id)`,
          link: () => card(false),
          embed: () => card(true),
        }[f.term]();
        where.push(`${not}${sql}`);
        break;
      }
      case 'is':
        where.push(`${not}${f.term === 'reply' ? 's.in_reply_to_id is not null' : 's.sensitive'}`);
        break;
      case 'language':
        where.push(`${not}coalesce(s.language = ${p(f.term)}, false)`);
        break;
      case 'before':
        where.push(`${not}(s.created_at < ${p(searchDate(f.term))})`);
        break;
      case 'after':
        // Mastodon's `gt` on a day: after the day is over.
        where.push(`${not}(s.created_at >= ${p(new Date(searchDate(f.term).getTime() + DAY_MS))})`);
        break;
      case 'during': {
        const day = searchDate(f.term);
        where.push(`${not}(s.created_at >= ${p(day)} and s.created_at < ${p(new Date(day.getTime() + DAY_MS))})`);
        break;
      }
    }
  }
  if (s.accountId !== null) where.push(`s.account_id = ${p(s.accountId)}::bigint`);
  if (s.maxId !== null) where.push(`s.id < ${p(s.maxId)}::bigint`);
  if (s.minId !== null) where.push(`s.id > ${p(s.minId)}::bigint`);
  // The library's statuses are checked with the visibility rule; an indexable account's public
  // status is visible to everyone its author does not block, which the hidden set below covers.
  const library = `((s.account_id = $1
      or s.id in (select m.status_id from mentions m where m.account_id = $1)
      or s.id in (select f.status_id from favourites f where f.account_id = $1)
      or s.id in (select b.status_id from bookmarks b where b.account_id = $1))
      and ${visibleSql('s', '$1::bigint')})`;
  const indexable = `(s.visibility = 'public' and a.indexable)`;
  const scope = q.scope === 'library' ? library : q.scope === 'public' ? indexable : `(${indexable} or ${library})`;
  // Who the searcher does not hear from (their own statuses aside): the accounts they block, mute
  // or are blocked by, read from the status row alone; the domains they hide, from its author's.
  const notHidden = `(s.account_id = $1 or s.account_id not in (${accountsHiddenFromSql('$1::bigint', '$4::timestamptz')}))`;
  const domainNotHidden = `(s.account_id = $1 or a.domain is null or not ${domainBlockedBySql('$1::bigint', 'a.domain')})`;
  const filters = where.map((w) => `and ${w}`).join('\n          ');
  const limits = `limit ${p(s.limit)} offset ${p(s.offset)}`;
  if (q.tsquery === '') {
    // Operators alone: the newest statuses that pass them (no rank to compute).
    const rows = await services.db.sql.query<{ id: string }>(
      `select s.id::text from statuses s join accounts a on a.id = s.account_id
        where $2 = '' and ($3 = '' or not s.search_vector @@ to_tsquery('simple', $3))
          and s.reblog_of_id is null and s.deleted_at is null and a.suspended_at is null
          and ${scope} and ${notHidden} and ${domainNotHidden}
          ${filters}
        order by s.id desc ${limits}`,
      params,
    );
    return rows.map((r) => r.id);
  }
  // Words: the matching statuses ranked from their own row (the inner query, which the offset 0
  // keeps from being merged into the outer one), then their authors looked up one by one in rank
  // order until the page is full. Joined at one level, PostgreSQL hashes the whole accounts table
  // on every search, whatever the number of matches (3 ms of a 4 ms search for a rare word over
  // 10,000 accounts; more on an instance that knows more accounts). The lookups cost what the page
  // reads past: when few authors are indexable (the default is not), a common word's every public
  // match is looked up (10,000 matches, 1% of 10,000 accounts indexable: 1.3x the hash join), but
  // never the whole accounts table. The pg_current_xact_id_if_assigned()
  // mention (never evaluated: "or true") marks the statement parallel-unsafe: planned for the
  // whole sorted list, the inner query would otherwise start parallel workers, which cost more to
  // start than the search takes. The tsqueries are sub-selects, computed once per statement: as a
  // named statement's generic plan would otherwise parse the query text again for every matching
  // row. Without operators the text is one of three (the scope), so it goes as a named prepared
  // statement, parsed and planned once per connection rather than on every search (most of a
  // rare word's search). The age is date_part's float8: extract() computes a numeric since
  // PostgreSQL 14, slower on every one of a common word's thousands of matches.
  const text = `select s.id::text from (
        select s.id, s.account_id, s.visibility, s.deleted_at,
               ts_rank(s.search_vector, (select to_tsquery('simple', $2))) / (1 + date_part('epoch', $4::timestamptz - s.created_at) / ${(HALF_RANK_DAYS * DAY_MS) / 1000}) as rank
          from statuses s
         where s.search_vector @@ (select to_tsquery('simple', $2))
           and ($3 = '' or not s.search_vector @@ (select to_tsquery('simple', $3)))
           and s.reblog_of_id is null and s.deleted_at is null and ${notHidden}
          ${filters}
         order by rank desc, s.id desc
        offset 0) s
      join accounts a on a.id = s.account_id
     where a.suspended_at is null and ${scope} and ${domainNotHidden}
       and (pg_current_xact_id_if_assigned() is null or true)
     order by s.rank desc, s.id desc ${limits}`;
  const rows = await services.db.sql.query<{ id: string }>(where.length === 0 ? prepared(text) : text, params);
  return rows.map((r) => r.id);
}

export interface AccountSearch {
  viewerId: string | null;
  q: string;
  following: boolean;
  limit: number;
  offset: number;
}

/** A page of account ids: prefix on username or display name, exact username, followed, local first. */
export async function searchAccountIds(services: Services, s: AccountSearch): Promise<string[]> {
  const q = s.q.trim().replace(/^@/, '');
  const [user, domain] = q.split('@');
  if (!user) return [];
  const local = domain !== undefined && domain.toLowerCase() === services.config.domain.toLowerCase();
  const rows = await services.db.sql.query<{ id: string }>(
    `select a.id::text from accounts a
      where a.suspended_at is null and a.moved_to_account_id is null
        and (lower(a.username) like lower($1) or lower(a.display_name) like lower($1))
        and ($2::text is null or lower(a.domain) like lower($2))
        and (not $3::boolean or a.domain is null)
        and not exists (select 1 from users u where u.account_id = a.id and not u.approved)
        and ($4::bigint is null or a.id = $4 or not exists (select 1 from blocks b where (b.account_id = $4 and b.target_account_id = a.id) or (b.account_id = a.id and b.target_account_id = $4)))
        and (not $5::boolean or exists (select 1 from follows f where f.account_id = $4 and f.target_account_id = a.id and f.state = 'accepted'))
      order by lower(a.username) = lower($6) and ($2::text is null or lower(a.domain) = lower($7)) desc,
               exists (select 1 from follows f where f.account_id = $4 and f.target_account_id = a.id and f.state = 'accepted') desc,
               (a.domain is null) desc, a.id
      limit $8 offset $9`,
    [`${escLike(user)}%`, domain && !local ? `${escLike(domain)}%` : null, local, s.viewerId, s.following, user, domain ?? '', s.limit, s.offset],
  );
  return rows.map((r) => r.id);
}

/**
 * A page of tag ids by name prefix (a leading # dropped): the exact name first, then the shortest.
 * `excludeUnreviewed`: only tags an admin reviewed as trends (approved or rejected), as Mastodon's
 * `exclude_unreviewed` keeps only tags with a `reviewed_at`.
 */
export async function searchTagIds(services: Services, q: string, limit: number, offset: number, excludeUnreviewed = false): Promise<string[]> {
  const name = q.trim().replace(/^#/, '');
  if (!name || !/^[\p{L}\p{M}\p{N}_]+$/u.test(name)) return [];
  const rows = await services.db.sql.query<{ id: string }>(
    `select t.id::text from tags t
      where lower(t.name) like lower($1)
        and (not $5::boolean or exists (select 1 from trends tr where tr.kind = 'tag' and tr.target_id = t.id and tr.reviewed_at is not null))
      order by lower(t.name) = lower($2) desc, length(t.name), lower(t.name)
      limit $3 offset $4`,
    [`${escLike(name)}%`, name, limit, offset, excludeUnreviewed],
  );
  return rows.map((r) => r.id);
}

/**
 * A status or an account known here by a pasted link: a status by its URI (or, for one of ours,
 * its page `/@user/:id`), an account by its URI or profile URL. No fetching; one statement.
 * A remote status's page link (`/@user/:id`) finds it too when its URI is the usual
 * `/users/user/statuses/:id` beside it and its stored URL is the link (Mastodon's guess, as
 * ResolveURLService: statuses.url has no index): a followers-only post cannot be fetched again, so
 * this is how a follower who pastes its link finds it.
 */
export async function knownByUrl(services: Services, url: string): Promise<{ statusId: string | null; accountId: string | null }> {
  const u = new URL(url);
  const ours = u.origin === new URL(services.config.publicUrl).origin;
  const page = /^\/@([^/@]+)\/(\d{1,19})$/.exec(u.pathname);
  const localId = ours ? page?.[2] ?? null : null;
  const guessedUri = !ours && page ? `${u.origin}/users/${page[1]}/statuses/${page[2]}` : null;
  const [row] = await services.db.sql.query<{ status_id: string | null; account_id: string | null }>(
    `select (select s.id::text from statuses s where (s.uri = $1 or s.id = $2::bigint or (s.uri = $3 and s.url = $1)) and s.deleted_at is null and s.reblog_of_id is null limit 1) as status_id,
            (select a.id::text from accounts a where (a.uri = $1 or a.url = $1) and a.suspended_at is null limit 1) as account_id`,
    [url, localId !== null && isId(localId) ? localId : null, guessedUri],
  );
  return { statusId: row?.status_id ?? null, accountId: row?.account_id ?? null };
}
