// The baseline of `npm run bench -- reads`: plain node:http + pg (a pool of 10, as Roost's) answering
// the same three routes with the same JSON from the same tables, the straightforward way: per
// request, the token looked up with its user and account in one statement (no cache), then one
// statement for the data — the account with its counts as sub-selects over follows and statuses —
// and Roost's pure serializers for the JSON. No router, CORS, request id or access log.
// argv: port, database URL. Prints `LISTENING <port>`.

import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { serializeAccount, type AccountView } from '../../src/serializers/account.ts';
import { serializeCredentialAccount } from '../../src/serializers/credential-account.ts';
import { serializeRelationship } from '../../src/serializers/relationship.ts';
import { accountColumns, accountFromRow, userColumns, userFromRow } from '../../src/services/reads/account-rows.ts';
import type { UserRole } from '../../src/db/entities/index.ts';

const port = Number(process.argv[2] ?? 0);
const databaseUrl = process.argv[3];
if (!databaseUrl) throw new Error('usage: reads-baseline-server.ts <port> <database-url>');
const baseUrl = 'https://roost.example';
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

const COUNTS = `(select count(*) from follows f where f.target_account_id = a.id and f.state = 'accepted')::int as followers_count,
  (select count(*) from follows f where f.account_id = a.id and f.state = 'accepted')::int as following_count,
  (select count(*) from statuses s where s.account_id = a.id and s.deleted_at is null)::int as statuses_count,
  (select max(s.created_at) from statuses s where s.account_id = a.id and s.deleted_at is null) as last_status_at`;

function view(row: Record<string, unknown>, id: string): AccountView {
  return {
    baseUrl,
    counts: new Map([[id, {
      followers: row.followers_count as number,
      following: row.following_count as number,
      statuses: row.statuses_count as number,
      lastStatusAt: (row.last_status_at as Date | null) ?? null,
    }]]),
    roles: new Map([[id, row.hl_id ? [{ id: row.hl_id as string, name: row.hl_name as string, color: row.hl_color as string }] : []]]),
    accounts: new Map(),
  };
}

async function viewerOf(req: http.IncomingMessage): Promise<{ accountId: string; row: Record<string, unknown> } | null> {
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
  return { accountId: r.account_id, row: r };
}

async function account(id: string): Promise<unknown> {
  const { rows } = await pool.query(
    `select ${accountColumns('a')}, ${COUNTS}, r.id::text as hl_id, r.name as hl_name, r.color as hl_color
       from accounts a left join users u on u.account_id = a.id left join user_roles r on r.id = u.role_id and r.highlighted
      where a.id = $1 and (u.id is null or u.approved)`,
    [id],
  );
  if (!rows[0]) return null;
  return serializeAccount(accountFromRow(rows[0]), view(rows[0], id));
}

async function credentials(accountId: string): Promise<unknown> {
  const { rows } = await pool.query(
    `select ${accountColumns('a')}, ${userColumns('u', 'u_')}, ${COUNTS},
            r.id::text as r_id, r.name as r_name, r.color as r_color, r.permissions::text as r_permissions, r.highlighted as r_highlighted,
            (select count(*) from (select 1 from follows f where f.target_account_id = a.id and f.state = 'requested' limit 40) q)::int as requests
       from accounts a join users u on u.account_id = a.id left join user_roles r on r.id = u.role_id
      where a.id = $1`,
    [accountId],
  );
  const row = rows[0];
  const role = row.r_id ? ({ id: row.r_id, name: row.r_name, color: row.r_color, permissions: row.r_permissions, highlighted: row.r_highlighted } as UserRole) : null;
  const v = view({ ...row, hl_id: role?.highlighted ? role.id : null, hl_name: role?.name, hl_color: role?.color }, row.id);
  return serializeCredentialAccount(accountFromRow(row), userFromRow(row, 'u_'), role, v, row.requests);
}

async function relationships(viewerId: string, ids: string[]): Promise<unknown> {
  const { rows } = await pool.query(
    `select a.id::text as id, o.state as out_state, o.show_reblogs, o.notify, o.languages, i.state as in_state,
            exists (select 1 from blocks b where b.account_id = $1 and b.target_account_id = a.id) as blocking,
            exists (select 1 from blocks b where b.account_id = a.id and b.target_account_id = $1) as blocked_by,
            m.hide_notifications as mute_hide,
            (a.domain is not null and exists (select 1 from account_domain_blocks d where d.account_id = $1 and d.domain = lower(a.domain))) as domain_blocking,
            exists (select 1 from account_pins p where p.account_id = $1 and p.target_account_id = a.id) as endorsed,
            n.comment as note
       from accounts a
       left join follows o on o.account_id = $1 and o.target_account_id = a.id
       left join follows i on i.account_id = a.id and i.target_account_id = $1
       left join mutes m on m.account_id = $1 and m.target_account_id = a.id and (m.expires_at is null or m.expires_at > now())
       left join account_notes n on n.account_id = $1 and n.target_account_id = a.id
      where a.id = any($2::bigint[])`,
    [viewerId, ids],
  );
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  return ids.filter((id) => byId.has(id)).map((id) => {
    const r = byId.get(id)!;
    return serializeRelationship(id, {
      outgoing: r.out_state ? { state: r.out_state, showReblogs: r.show_reblogs, notify: r.notify, languages: r.languages ?? null } : null,
      incomingState: r.in_state,
      blocking: r.blocking,
      blockedBy: r.blocked_by,
      mute: r.mute_hide === null ? null : { hideNotifications: r.mute_hide },
      domainBlocking: r.domain_blocking,
      endorsed: r.endorsed,
      note: r.note ?? '',
    });
  });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const handle = async (): Promise<void> => {
    if (url.pathname === '/api/v1/accounts/verify_credentials') {
      const viewer = await viewerOf(req);
      return viewer ? send(res, 200, await credentials(viewer.accountId)) : send(res, 401, { error: 'The access token is invalid' });
    }
    if (url.pathname === '/api/v1/accounts/relationships') {
      const viewer = await viewerOf(req);
      if (!viewer) return send(res, 401, { error: 'The access token is invalid' });
      const ids = url.searchParams.getAll('id[]').filter((id) => /^\d{1,18}$/.test(id)).slice(0, 40);
      return send(res, 200, await relationships(viewer.accountId, ids));
    }
    const m = /^\/api\/v1\/accounts\/(\d{1,18})$/.exec(url.pathname);
    if (m) {
      const body = await account(m[1]!);
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
