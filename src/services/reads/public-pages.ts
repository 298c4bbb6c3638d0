/**
 * What the public pages (src/api/pages/) read beyond the views: an account by its handle with the
 * facts that decide its page (suspended, a pending sign-up, its URL for a remote one), the public
 * posts of an account's feed and of a tag's feed, and the status an oEmbed URL names. Each is one
 * statement; the statuses themselves are rendered by the views (src/views/statuses.ts).
 */
import type { Services } from '../../context.ts';
import { prepared } from '../../db/prepared.ts';
import { isId } from './page.ts';
import { visibleSql } from './statuses.ts';

/** What a username or a domain (with a port, for tests and development) may hold; anything else names no account. */
const USERNAME = /^[\p{L}\p{N}_.-]{1,200}$/u;
const DOMAIN = /^[\p{L}\p{N}.:-]{1,253}$/u;

export interface PublicAccountHandle {
  id: string;
  username: string;
  /** null: local. */
  domain: string | null;
  url: string | null;
  suspended: boolean;
}

const ACCOUNT_BY_HANDLE_SQL = prepared(
  `select a.id::text as id, a.username, a.domain, a.url, a.suspended_at is not null as suspended
     from accounts a left join users u on u.account_id = a.id
    where lower(a.username) = lower($1) and (case when $2::text is null then a.domain is null else lower(a.domain) = lower($2::text) end)
      and (a.domain is not null or u.approved is not false)
    order by a.id limit 1`,
);

/** The account `username` (local when `domain` is null), or null: unknown, or a sign-up not approved yet. */
export async function publicAccountByHandle(services: Services, username: string, domain: string | null): Promise<PublicAccountHandle | null> {
  if (!USERNAME.test(username) || (domain !== null && !DOMAIN.test(domain))) return null;
  const [row] = await services.db.sql.query<{ id: string; username: string; domain: string | null; url: string | null; suspended: boolean }>(
    ACCOUNT_BY_HANDLE_SQL,
    [username, domain],
  );
  return row ? { id: row.id, username: row.username, domain: row.domain, url: row.url, suspended: row.suspended } : null;
}

/**
 * An account's public posts for its feed, newest first: public only (no unlisted, no replies to
 * others, no reblogs), as Mastodon's RSS of an account.
 */
export async function accountFeedIds(services: Services, accountId: string, limit: number): Promise<string[]> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s
      where s.account_id = $1 and s.visibility = 'public' and s.reblog_of_id is null
        and (s.in_reply_to_id is null or s.in_reply_to_account_id = s.account_id) and ${visibleSql('s', 'null::bigint')}
      order by s.id desc limit ${Math.max(1, Math.min(limit, 40))}`,
    [accountId],
  );
  return rows.map((r) => r.id);
}

/**
 * A status a visitor may see by its local URL's parts (`/@user/:id`, `/users/:user/statuses/:id`):
 * public or unlisted, not a reblog, by the local account `username`. Null otherwise.
 */
export async function publicLocalStatusId(services: Services, username: string, id: string): Promise<string | null> {
  if (!isId(id) || !USERNAME.test(username)) return null;
  const [row] = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s join accounts a on a.id = s.account_id
      where s.id = $1 and a.domain is null and lower(a.username) = lower($2) and s.reblog_of_id is null
        and ${visibleSql('s', 'null::bigint')}`,
    [id, username],
  );
  return row?.id ?? null;
}

