/**
 * Blocklist subscriptions (a Roost extension) through the real server: a list on loopback in
 * Mastodon's CSV export format and as JSON, fetched when subscribed and again on the instance's
 * clock; the review queue (approve, reject, an entry covered by the operator's own block); auto-apply;
 * an entry gone upstream retracting only the block it made; the export in Mastodon's CSV format.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { runCommand } from '../../src/control/commands.ts';
import { parseBlocklist } from '../../src/services/blocklists.ts';

const clock = createManualClock(new Date('2026-04-01T08:00:00.000Z'));
let roost: TestRoost;
let admin: TestUser;
let plain: TestUser;
let server: Server;
let base: string;
const lists: Record<string, { type: string; body: string }> = {};
let fetches = 0;

const HEADER = '#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate';
const deps = () => ({ federation: roost.federation });

beforeAll(async () => {
  server = createServer((req, res) => {
    fetches++;
    const list = lists[req.url ?? ''];
    if (!list) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': list.type }).end(list.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  roost = await startTestRoost({}, { clock });
  const scopes = ['read', 'write', 'admin:read', 'admin:write'];
  admin = await createTestUser(roost, 'listadmin', { role: 'Admin', scopes });
  plain = await createTestUser(roost, 'listplain', { scopes });
});
afterAll(async () => {
  await roost?.close();
  await new Promise<void>((r) => server?.close(() => r()));
});

async function blocks(): Promise<Record<string, { id: string; severity: string; public_comment: string | null; reject_media: boolean }>> {
  const res = await admin.api('/api/v1/admin/domain_blocks');
  return Object.fromEntries((res.body as any[]).map((b) => [b.domain, b]));
}
const entries = async (query = '') => (await admin.api(`/api/v1/admin/blocklist_entries${query}`)).body as any[];

describe('a CSV list, reviewed by hand', () => {
  let sub: any;

  it('fetches the list when subscribed, and puts its entries in the review queue', async () => {
    lists['/list.csv'] = {
      type: 'text/csv',
      body: `${HEADER}\r\nspam.example,suspend,false,false,"Spam, and ""more""",false\r\nloud.example,silence,true,false,,false\nkept.example,noop,false,true,,true\nnot a domain,suspend,,,,\n`,
    };
    const res = await admin.api('/api/v1/admin/blocklist_subscriptions', { body: { url: `${base}/list.csv` } });
    expect(res.status).toBe(200);
    sub = res.body;
    expect(sub).toMatchObject({ url: `${base}/list.csv`, auto_apply: false, last_fetched_at: null, entries: { pending: 0, applied: 0, covered: 0, rejected: 0 } });
    const pending = await eventually(async () => {
      const e = await entries('?state=pending');
      return e.length === 3 ? e : null;
    });
    expect(pending.map((e) => [e.domain, e.severity, e.reject_media, e.reject_reports, e.public_comment, e.obfuscate, e.state, e.domain_block_id])).toEqual([
      ['kept.example', 'noop', false, true, null, true, 'pending', null],
      ['loud.example', 'silence', true, false, null, false, 'pending', null],
      ['spam.example', 'suspend', false, false, 'Spam, and "more"', false, 'pending', null],
    ]);
    const shown = (await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}`)).body;
    expect(shown).toMatchObject({ last_fetched_at: '2026-04-01T08:00:00.000Z', last_success_at: '2026-04-01T08:00:00.000Z', last_error: null, entries: { pending: 3 } });
    expect(await blocks()).toEqual({});
    // The CLI's review queue is the same.
    expect(((await runCommand(roost.services, 'blocklists.pending', {}, deps())).entries as any[]).map((e) => e.domain).sort()).toEqual(['kept.example', 'loud.example', 'spam.example']);
  });

  it('approves (a block, the entry’s own), rejects, and marks covered what the operator already blocked', async () => {
    const [kept, loud, spam] = await entries('?state=pending');
    // The operator's own block on kept.example, before the entry is approved.
    expect((await runCommand(roost.services, 'domains.block', { domain: 'kept.example', severity: 'suspend' }, deps())).created).toBe(true);
    const approved = await admin.api(`/api/v1/admin/blocklist_entries/${spam.id}/approve`, { method: 'POST' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ domain: 'spam.example', state: 'applied', domain_block_id: expect.stringMatching(/^\d+$/) });
    const covered = await admin.api(`/api/v1/admin/blocklist_entries/${kept.id}/approve`, { method: 'POST' });
    expect(covered.body).toMatchObject({ domain: 'kept.example', state: 'covered', domain_block_id: null });
    const rejected = await runCommand(roost.services, 'blocklists.reject', { id: loud.id }, deps());
    expect(rejected.entry).toMatchObject({ domain: 'loud.example', state: 'rejected' });
    const now = await blocks();
    expect(Object.keys(now).sort()).toEqual(['kept.example', 'spam.example']);
    expect(now['spam.example']).toMatchObject({ id: approved.body.domain_block_id, severity: 'suspend', public_comment: 'Spam, and "more"' });
    // Not pending any more: 422; unknown: 404.
    expect(await admin.api(`/api/v1/admin/blocklist_entries/${spam.id}/approve`, { method: 'POST' })).toMatchObject({ status: 422, body: { error: 'This entry is not pending' } });
    expect((await admin.api('/api/v1/admin/blocklist_entries/999/reject', { method: 'POST' })).status).toBe(404);
    const log = await roost.services.db.sql.query<{ action: string; human_identifier: string }>(
      `select action, human_identifier from admin_action_logs where target_type = 'BlocklistEntry' order by id`,
    );
    expect(log).toEqual([
      { action: 'approve', human_identifier: 'spam.example' },
      { action: 'approve', human_identifier: 'kept.example' },
      { action: 'reject', human_identifier: 'loud.example' },
    ]);
  });

  it('refetches on the clock: an entry gone upstream retracts its own block only; a changed one updates it', async () => {
    lists['/list.csv'] = { type: 'text/csv', body: `${HEADER}\nspam.example,silence,false,false,Spam,false\nnew.example,suspend,false,false,,false\n` };
    // Not before the interval (a day by default).
    const before = fetches;
    clock.advance(3600_000);
    await settled(roost);
    expect(fetches).toBe(before);
    clock.advance(86_400_000);
    await eventually(async () => (await entries('?state=pending')).some((e) => e.domain === 'new.example'));
    await settled(roost);
    expect(fetches).toBe(before + 1);
    const now = await blocks();
    // spam.example's block follows the list; kept.example (the operator's) stays although the list dropped it.
    expect(Object.keys(now).sort()).toEqual(['kept.example', 'spam.example']);
    expect(now['spam.example']).toMatchObject({ severity: 'silence', public_comment: 'Spam' });
    expect((await entries()).map((e) => [e.domain, e.state]).sort()).toEqual([
      ['new.example', 'pending'],
      ['spam.example', 'applied'],
    ]);

    lists['/list.csv'] = { type: 'text/csv', body: `${HEADER}\nnew.example,suspend,false,false,,false\n` };
    const summary = await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}/refresh`, { method: 'POST' });
    expect(summary.body).toEqual({ added: 0, changed: 0, removed: 1, applied: 0, retracted: 1, error: null });
    expect(Object.keys(await blocks())).toEqual(['kept.example']);
  });

  it('keeps everything when the list cannot be fetched or comes back empty', async () => {
    lists['/list.csv'] = { type: 'text/csv', body: `${HEADER}\n` };
    const empty = await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}/refresh`, { method: 'POST' });
    expect(empty.body).toEqual({ added: 0, changed: 0, removed: 0, applied: 0, retracted: 0, error: 'The list has no entries: nothing changed' });
    delete lists['/list.csv'];
    const missing = await runCommand(roost.services, 'blocklists.refresh', { id: sub.id }, deps());
    expect(missing.summary).toMatchObject({ error: 'HTTP 404' });
    expect((await entries()).map((e) => e.domain)).toEqual(['new.example']);
    expect((await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}`)).body).toMatchObject({ last_error: 'HTTP 404', last_success_at: expect.any(String) });
  });
});

describe('a JSON list, applied automatically', () => {
  it('applies new entries at once, retracts them when they go, and lifts them on unsubscribe with retract', async () => {
    lists['/list.json'] = {
      type: 'application/json',
      body: JSON.stringify([{ domain: 'auto-one.example', severity: 'suspend', public_comment: 'bots' }, 'auto-two.example', { domain: 'kept.example', severity: 'silence' }, { domain: 'x', severity: 'bogus' }]),
    };
    const sub = (await admin.api('/api/v1/admin/blocklist_subscriptions', { body: { url: `${base}/list.json`, auto_apply: true } })).body;
    await eventually(async () => (await entries(`?subscription_id=${sub.id}`)).length === 3);
    await settled(roost);
    expect((await entries(`?subscription_id=${sub.id}`)).map((e) => [e.domain, e.state]).sort()).toEqual([
      ['auto-one.example', 'applied'],
      ['auto-two.example', 'applied'],
      ['kept.example', 'covered'],
    ]);
    // A page of the queue is one statement, whatever its length (the role's bits come with the token).
    const statements = await capturedStatements(roost, () => admin.api(`/api/v1/admin/blocklist_entries?subscription_id=${sub.id}&limit=2`));
    expect(statements.map((q) => q.slice(0, 30))).toEqual(['select id::text as id, subscri']);
    const now = await blocks();
    expect(now['auto-one.example']).toMatchObject({ severity: 'suspend', public_comment: 'bots' });
    expect(now['auto-two.example']).toMatchObject({ severity: 'suspend' });
    expect(now['kept.example']).toMatchObject({ severity: 'suspend' });

    lists['/list.json'] = { type: 'application/json', body: JSON.stringify(['auto-two.example', 'kept.example']) };
    const summary = (await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}/refresh`, { method: 'POST' })).body;
    expect(summary).toMatchObject({ removed: 1, retracted: 1 });
    expect(Object.keys(await blocks()).sort()).toEqual(['auto-two.example', 'kept.example']);

    expect((await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}?retract=true`, { method: 'DELETE' })).status).toBe(200);
    expect(Object.keys(await blocks())).toEqual(['kept.example']);
    expect((await admin.api(`/api/v1/admin/blocklist_subscriptions/${sub.id}`)).status).toBe(404);
    expect(await roost.services.db.sql.query(`select 1 from jobs where kind = 'timer' and dedupe_key = $1`, [`blocklist:${sub.id}`])).toEqual([]);
  });
});

describe('the API’s refusals and the export', () => {
  it('refuses other roles, bad URLs, a second subscription to one URL, unknown ids, unknown states', async () => {
    expect(await plain.api('/api/v1/admin/blocklist_subscriptions')).toMatchObject({ status: 403, body: { error: 'This action is not allowed' } });
    expect((await plain.api('/api/v1/admin/domain_blocks/export')).status).toBe(403);
    expect((await apiRequest(roost, '/api/v1/admin/blocklist_entries')).status).toBe(403);
    const count = async () => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from blocklist_subscriptions`))[0]!.n;
    const n = await count();
    expect(await admin.api('/api/v1/admin/blocklist_subscriptions', { body: { url: 'gopher://lists.example/x' } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Url is invalid' },
    });
    expect((await admin.api('/api/v1/admin/blocklist_subscriptions', { body: {} })).status).toBe(422);
    const first = await admin.api('/api/v1/admin/blocklist_subscriptions', { body: { url: `${base}/other.csv` } });
    expect(first.status).toBe(200);
    expect(await admin.api('/api/v1/admin/blocklist_subscriptions', { body: { url: `${base}/other.csv` } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Url has already been taken' },
    });
    expect(await count()).toBe(n + 1);
    for (const [method, path] of [
      ['GET', '/api/v1/admin/blocklist_subscriptions/42'],
      ['PUT', '/api/v1/admin/blocklist_subscriptions/42'],
      ['DELETE', '/api/v1/admin/blocklist_subscriptions/42'],
      ['POST', '/api/v1/admin/blocklist_subscriptions/42/refresh'],
      ['GET', '/api/v1/admin/blocklist_entries/42'],
      ['POST', '/api/v1/admin/blocklist_entries/42/approve'],
    ] as const) {
      expect(await admin.api(path, { method })).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    }
    expect((await admin.api('/api/v1/admin/blocklist_entries?state=maybe')).status).toBe(422);
    const patched = await admin.api(`/api/v1/admin/blocklist_subscriptions/${first.body.id}`, { method: 'PATCH', body: { auto_apply: true } });
    expect(patched.body).toMatchObject({ auto_apply: true, url: `${base}/other.csv` });
  });

  it('exports the blocks in Mastodon’s CSV format, which a subscription reads back', async () => {
    await runCommand(roost.services, 'domains.block', { domain: 'quoted.example', severity: 'silence', rejectMedia: true, publicComment: 'a "quote", a comma', obfuscate: true }, deps());
    const res = await admin.api('/api/v1/admin/domain_blocks/export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe(`${HEADER}\nkept.example,suspend,false,false,,false\nquoted.example,silence,true,false,"a ""quote"", a comma",true\n`);
    expect((await runCommand(roost.services, 'domains.export', {}, deps())).csv).toBe(res.body);
    expect(parseBlocklist(res.body)).toEqual([
      { domain: 'kept.example', severity: 'suspend', rejectMedia: false, rejectReports: false, publicComment: null, obfuscate: false },
      { domain: 'quoted.example', severity: 'silence', rejectMedia: true, rejectReports: false, publicComment: 'a "quote", a comma', obfuscate: true },
    ]);
  });
});
