// The baseline of `npm run bench -- timelines`: plain node:http + pg (a pool of 10, as Roost's)
// answering GET /api/v1/timelines/home?limit=N and GET /api/v1/statuses/:id with the same JSON
// from the same tables, the straightforward way, reading the precomputed feed (home_feeds) as it
// is, with no filtering at read time: per request the token looked up with its account (no
// cache), then one statement each for the page's statuses (with reblogged originals, counters and
// application), their authors (with their counters), their mentions and tags, and the viewer's
// flags; Roost's pure serializers make the JSON. No router, CORS, request id or access log.
// argv: port, database URL. Prints `LISTENING <port>`.

import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Account } from '../../src/db/entities/index.ts';
import { accountColumns, accountFromRow } from '../../src/services/reads/account-rows.ts';
import { serializeStatus, type StatusRow, type StatusView } from '../../src/serializers/status.ts';

const port = Number(process.argv[2] ?? 0);
const databaseUrl = process.argv[3];
if (!databaseUrl) throw new Error('usage: timelines-baseline-server.ts <port> <database-url>');
const baseUrl = 'https://roost.example';
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

async function viewerOf(req: http.IncomingMessage): Promise<string | null> {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return null;
  const hash = createHash('sha256').update(m[1]!).digest('hex');
  const { rows } = await pool.query(
    `select t.revoked_at, t.expires_at, u.disabled, u.approved, a.suspended_at, a.id::text as account_id
       from oauth_access_tokens t join users u on u.id = t.user_id join accounts a on a.id = u.account_id
      where t.token_hash = $1`,
    [hash],
  );
  const r = rows[0];
  if (!r || r.revoked_at || (r.expires_at && r.expires_at <= new Date()) || r.disabled || !r.approved || r.suspended_at) return null;
  return r.account_id;
}

const STATUS_COLUMNS = `s.id::text, s.account_id::text, s.uri, s.url, s.text, s.content, s.spoiler_text, s.visibility, s.sensitive,
  s.language, s.in_reply_to_id::text, s.in_reply_to_account_id::text, s.reblog_of_id::text, s.created_at, s.edited_at,
  s.application_id::text, coalesce(st.replies_count, 0) as replies_count, coalesce(st.reblogs_count, 0) as reblogs_count,
  coalesce(st.favourites_count, 0) as favourites_count, app.name as app_name, app.website as app_website`;

function statusFromRow(r: Record<string, any>): StatusRow {
  return {
    id: r.id,
    accountId: r.account_id,
    uri: r.uri,
    url: r.url ?? null,
    text: r.text,
    content: r.content,
    spoilerText: r.spoiler_text,
    visibility: r.visibility,
    sensitive: r.sensitive,
    language: r.language ?? null,
    inReplyToId: r.in_reply_to_id ?? null,
    inReplyToAccountId: r.in_reply_to_account_id ?? null,
    reblogOfId: r.reblog_of_id ?? null,
    createdAt: r.created_at,
    editedAt: r.edited_at ?? null,
    application: r.application_id ? { name: r.app_name ?? '', website: r.app_website || null } : null,
    counts: { replies: Number(r.replies_count), reblogs: Number(r.reblogs_count), favourites: Number(r.favourites_count) },
    // The seeded statuses have no card, media or poll: the baseline answers the same JSON without reading them.
    card: null,
  };
}

/** Authors, mentions and tags (and the viewer's flags) of the statuses: the view serializeStatus takes. */
async function viewOf(statuses: Map<string, StatusRow>, viewerId: string | null): Promise<StatusView> {
  const ids = [...statuses.keys()];
  const accountIds = [...new Set([...statuses.values()].map((s) => s.accountId))];
  const view: StatusView = {
    baseUrl,
    viewerId,
    accounts: new Map<string, Account>(),
    accountView: { baseUrl, localDomain: 'roost.example', counts: new Map(), roles: new Map(), accounts: new Map(), mentions: new Map() },
    mentions: new Map(),
    tags: new Map(),
    flags: new Map(),
  };
  const [accounts, extras, flags] = await Promise.all([
    pool.query(
      `select ${accountColumns('a')}, coalesce(s.followers_count, 0) as followers_count, coalesce(s.following_count, 0) as following_count,
              coalesce(s.statuses_count, 0) as statuses_count, s.last_status_at, r.id::text as role_id, r.name as role_name, r.color as role_color
         from accounts a left join account_stats s on s.account_id = a.id
         left join users u on u.account_id = a.id left join user_roles r on r.id = u.role_id and r.highlighted
        where a.id = any($1::bigint[])`,
      [accountIds],
    ),
    pool.query(
      `select 'mention' as kind, m.status_id::text, a.id::text, a.username as name, a.domain, coalesce(a.url, a.uri) as url
         from mentions m join accounts a on a.id = m.account_id where m.status_id = any($1::bigint[]) and not m.silent
       union all
       select 'tag', st.status_id::text, t.id::text, t.name, null, null from statuses_tags st join tags t on t.id = st.tag_id
        where st.status_id = any($1::bigint[])
       order by 1, 2, 3`,
      [ids],
    ),
    viewerId
      ? pool.query(
          `select x.id::text,
                  exists (select 1 from favourites f where f.status_id = x.id and f.account_id = $2) as favourited,
                  exists (select 1 from statuses r where r.reblog_of_id = x.id and r.account_id = $2 and r.deleted_at is null) as reblogged,
                  exists (select 1 from bookmarks b where b.status_id = x.id and b.account_id = $2) as bookmarked,
                  exists (select 1 from status_pins p where p.status_id = x.id and p.account_id = $2) as pinned
             from unnest($1::bigint[]) as x(id)`,
          [ids, viewerId],
        )
      : null,
  ]);
  for (const row of accounts.rows) {
    const account = accountFromRow(row);
    view.accounts.set(account.id, account);
    view.accountView.accounts!.set(account.id, account);
    view.accountView.counts!.set(account.id, {
      followers: Number(row.followers_count),
      following: Number(row.following_count),
      statuses: Number(row.statuses_count),
      lastStatusAt: row.last_status_at ?? null,
    });
    view.accountView.roles!.set(account.id, row.role_id ? [{ id: row.role_id, name: row.role_name ?? '', color: row.role_color ?? '' }] : []);
  }
  for (const e of extras.rows) {
    if (e.kind === 'mention') {
      const list = view.mentions.get(e.status_id) ?? [];
      list.push({ id: e.id, username: e.name, domain: e.domain, url: e.url ?? '' });
      view.mentions.set(e.status_id, list);
    } else {
      const list = view.tags.get(e.status_id) ?? [];
      list.push(e.name);
      view.tags.set(e.status_id, list);
    }
  }
  for (const f of flags?.rows ?? []) view.flags.set(f.id, { favourited: f.favourited, reblogged: f.reblogged, bookmarked: f.bookmarked, pinned: f.pinned, muted: false });
  return view;
}

async function home(viewerId: string, limit: number): Promise<unknown[]> {
  const { rows } = await pool.query(
    `with page as materialized (select status_id from home_feeds where account_id = $1 order by status_id desc limit $2)
     select ${STATUS_COLUMNS}, s.id in (select status_id from page) as in_page
       from statuses s left join status_stats st on st.status_id = s.id
       left join oauth_applications app on app.id = s.application_id
      where s.id = any(array_cat(array(select status_id from page),
                                 array(select r.reblog_of_id from statuses r where r.id = any(array(select status_id from page)) and r.reblog_of_id is not null)))
      order by s.id desc`,
    [viewerId, limit],
  );
  const statuses = new Map(rows.map((r) => [r.id as string, statusFromRow(r)]));
  const view = await viewOf(statuses, viewerId);
  return rows.filter((r) => r.in_page).map((r) => serializeStatus(statuses.get(r.id)!, statuses, view)).filter((x) => x !== null);
}

async function status(id: string): Promise<unknown> {
  const { rows } = await pool.query(
    `select ${STATUS_COLUMNS} from statuses s left join status_stats st on st.status_id = s.id
       left join oauth_applications app on app.id = s.application_id
      where s.id = any(array[$1::bigint, (select r.reblog_of_id from statuses r where r.id = $1)])
        and (s.id <> $1 or (s.visibility in ('public', 'unlisted') and s.deleted_at is null))`,
    [id],
  );
  const statuses = new Map(rows.map((r) => [r.id as string, statusFromRow(r)]));
  if (!statuses.has(id)) return null;
  return serializeStatus(statuses.get(id)!, statuses, await viewOf(statuses, null));
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const handle = async (): Promise<void> => {
    if (url.pathname === '/api/v1/timelines/home') {
      const viewerId = await viewerOf(req);
      if (!viewerId) return send(res, 401, { error: 'The access token is invalid' });
      const limit = Math.min(40, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
      const body = (await home(viewerId, limit)) as { id: string }[];
      const u = `${baseUrl}/api/v1/timelines/home?limit=${limit}`;
      const link = body.length ? `<${u}&max_id=${body[body.length - 1]!.id}>; rel="next", <${u}&min_id=${body[0]!.id}>; rel="prev"` : '';
      return send(res, 200, body, link ? { link } : {});
    }
    const m = /^\/api\/v1\/statuses\/(\d{1,18})$/.exec(url.pathname);
    if (m) {
      const body = await status(m[1]!);
      return body ? send(res, 200, body) : send(res, 404, { error: 'Record not found' });
    }
    send(res, 404, { error: 'Not found' });
  };
  handle().catch((err) => send(res, 500, { error: String(err) }));
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : port}\n`);
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
