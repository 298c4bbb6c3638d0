/**
 * Admin webhooks through the real server: the API (list, show, create, update, enable, disable,
 * rotate_secret, delete, failures) with its refusals and bad input, and delivery to a receiver on
 * loopback that checks every X-Hub-Signature and sees each event exactly once, also when it
 * answered 500 the first time (the retry comes after the backoff, on the instance's clock).
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { runCommand } from '../../src/control/commands.ts';
import { recordEvent } from '../../src/services/actor-store.ts';
import { webhooksConsumer } from '../../src/effects/webhooks.ts';
import { upcast, type StoredEvent } from '../../src/events/catalogue.ts';

const clock = createManualClock(new Date('2026-03-01T12:00:00.000Z'));
let roost: TestRoost;
let admin: TestUser;
let moderator: TestUser;
let plain: TestUser;
let author: TestUser;

interface Received {
  event: string;
  body: any;
  raw: string;
  signature: string | undefined;
  status: number;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl: string;
/** Answers 500 to the first account.created delivery, 200 otherwise. */
let failedOnce = false;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sign = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
const deps = () => ({ federation: roost.federation });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw);
      let status = 200;
      if (body.event === 'account.created' && !failedOnce) {
        failedOnce = true;
        status = 500;
      }
      received.push({ event: body.event, body, raw, signature: req.headers['x-hub-signature'] as string | undefined, status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  roost = await startTestRoost({ registrations: { mode: 'approval' } }, { clock });
  const adminScopes = ['read', 'write', 'admin:read', 'admin:write'];
  admin = await createTestUser(roost, 'hookadmin', { role: 'Admin', scopes: adminScopes });
  moderator = await createTestUser(roost, 'hookmod', { role: 'Moderator', scopes: adminScopes });
  plain = await createTestUser(roost, 'hookplain', { scopes: adminScopes });
  author = await createTestUser(roost, 'author', { scopes: ['read', 'write'] });
});
afterAll(async () => {
  await roost?.close();
  await new Promise<void>((r) => receiver?.close(() => r()));
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [r] = await roost.services.db.sql.query<{ n: number }>(sql, params);
  return r!.n;
}

describe('the admin webhook API', () => {
  it('creates, shows, lists, updates, enables, disables, rotates and deletes, each in the audit log', async () => {
    const created = await admin.api('/api/v1/admin/webhooks', { body: { url: 'https://hooks.example/a', events: ['status.created', ' report.created '] } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      url: 'https://hooks.example/a',
      events: ['status.created', 'report.created'],
      enabled: true,
      secret: expect.stringMatching(/^[0-9a-f]{40}$/),
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const id = created.body.id as string;
    expect((await admin.api(`/api/v1/admin/webhooks/${id}`)).body).toEqual(created.body);
    expect((await admin.api('/api/v1/admin/webhooks')).body).toEqual([created.body]);

    const updated = await admin.api(`/api/v1/admin/webhooks/${id}`, { method: 'PATCH', body: { events: ['account.created'] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ url: 'https://hooks.example/a', events: ['account.created'], secret: created.body.secret });
    const disabled = await admin.api(`/api/v1/admin/webhooks/${id}/disable`, { method: 'POST' });
    expect(disabled.body.enabled).toBe(false);
    expect((await admin.api(`/api/v1/admin/webhooks/${id}/enable`, { method: 'POST' })).body.enabled).toBe(true);
    const rotated = await admin.api(`/api/v1/admin/webhooks/${id}/rotate_secret`, { method: 'POST' });
    expect(rotated.body.secret).toMatch(/^[0-9a-f]{40}$/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await admin.api(`/api/v1/admin/webhooks/${id}/failures`)).body).toEqual([]);

    const deleted = await admin.api(`/api/v1/admin/webhooks/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    expect((await admin.api(`/api/v1/admin/webhooks/${id}`)).status).toBe(404);

    const log = await roost.services.db.sql.query<{ action: string; account_id: string }>(
      `select action, account_id::text as account_id from admin_action_logs where target_type = 'Webhook' and target_id = $1 order by id`,
      [id],
    );
    expect(log.map((l) => l.action)).toEqual(['create', 'update', 'disable', 'enable', 'rotate_secret', 'destroy']);
    expect(new Set(log.map((l) => l.account_id))).toEqual(new Set([admin.account.id]));
  });

  it('refuses users whose role may not manage webhooks (403), and tokens without the admin scope', async () => {
    for (const who of [plain, moderator]) {
      expect(await who.api('/api/v1/admin/webhooks')).toMatchObject({ status: 403, body: { error: 'This action is not allowed' } });
      expect((await who.api('/api/v1/admin/webhooks', { body: { url: 'https://x.example', events: ['status.created'] } })).status).toBe(403);
    }
    const readOnly = await createTestUser(roost, 'hookreader', { role: 'Admin', scopes: ['read', 'admin:read'] });
    expect((await readOnly.api('/api/v1/admin/webhooks')).status).toBe(200);
    expect((await readOnly.api('/api/v1/admin/webhooks', { body: { url: 'https://x.example', events: ['status.created'] } })).status).toBe(403);
    // Without a token, Mastodon's admin API says 403 too.
    expect((await apiRequest(roost, '/api/v1/admin/webhooks')).status).toBe(403);
    expect(await count(`select count(*)::int as n from webhooks`)).toBe(0);
  });

  it('answers bad input with Mastodon’s 422 and a missing id with 404, writing nothing', async () => {
    const unknownEvent = await admin.api('/api/v1/admin/webhooks', { body: { url: 'https://hooks.example/b', events: ['status.created', 'account.exploded'] } });
    expect(unknownEvent.status).toBe(422);
    expect(unknownEvent.body).toEqual({ error: 'Validation failed: Events is invalid', details: { events: [{ error: 'ERR_INVALID', description: 'is invalid' }] } });
    const badUrl = await admin.api('/api/v1/admin/webhooks', { body: { url: 'ftp://hooks.example/b', events: ['status.created'] } });
    expect(badUrl).toMatchObject({ status: 422, body: { error: 'Validation failed: Url is invalid' } });
    const nothing = await admin.api('/api/v1/admin/webhooks', { body: {} });
    expect(nothing).toMatchObject({ status: 422, body: { error: "Validation failed: Url can't be blank, Events can't be blank" } });
    expect(await count(`select count(*)::int as n from webhooks`)).toBe(0);
    for (const [method, path] of [
      ['GET', '/api/v1/admin/webhooks/123'],
      ['PUT', '/api/v1/admin/webhooks/123'],
      ['POST', '/api/v1/admin/webhooks/123/enable'],
      ['POST', '/api/v1/admin/webhooks/123/rotate_secret'],
      ['DELETE', '/api/v1/admin/webhooks/123'],
      ['GET', '/api/v1/admin/webhooks/123/failures'],
      ['GET', '/api/v1/admin/webhooks/nope'],
    ] as const) {
      expect(await admin.api(path, { method, body: method === 'PUT' ? { url: 'https://x.example' } : undefined })).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    }
    const kept = await admin.api('/api/v1/admin/webhooks', { body: { url: 'https://hooks.example/c', events: ['status.created'] } });
    const bad = await admin.api(`/api/v1/admin/webhooks/${kept.body.id}`, { method: 'PUT', body: { events: ['nope'] } });
    expect(bad.status).toBe(422);
    expect((await admin.api(`/api/v1/admin/webhooks/${kept.body.id}`)).body.events).toEqual(['status.created']);
    await admin.api(`/api/v1/admin/webhooks/${kept.body.id}`, { method: 'DELETE' });
  });
});

describe('delivery', () => {
  it('signs every delivery, sends each event once, retries a 500 after the backoff, and shows the failure meanwhile', async () => {
    const all = await admin.api('/api/v1/admin/webhooks', {
      body: { url: receiverUrl, events: ['account.created', 'account.approved', 'account.updated', 'report.created', 'report.updated', 'status.created', 'status.updated'] },
    });
    expect(all.status).toBe(200);
    const secret = all.body.secret as string;
    // A disabled webhook gets nothing; one for another event gets only that event.
    const off = await admin.api('/api/v1/admin/webhooks', { body: { url: `${receiverUrl}?off`, events: ['status.created'] } });
    await admin.api(`/api/v1/admin/webhooks/${off.body.id}/disable`, { method: 'POST' });

    // account.created: a sign-up through the API (approval mode), then account.approved.
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Hooks', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } })).body;
    const appToken = (
      await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read write' } })
    ).body.access_token as string;
    const signUp = await apiRequest(roost, '/api/v1/accounts', {
      token: appToken,
      body: { username: 'newcomer', email: 'newcomer@example.test', password: 'long enough pw', agreement: true, locale: 'en', reason: 'I like birds' },
    });
    expect(signUp.status).toBe(200);
    // The first delivery is answered 500: the failure shows through the API and the CLI.
    const failure = await eventually(async () => {
      const f = (await admin.api(`/api/v1/admin/webhooks/${all.body.id}/failures`)).body as any[];
      return f.length === 1 ? f[0] : null;
    });
    expect(failure).toEqual({
      webhook_id: all.body.id,
      event_id: expect.stringMatching(/^\d+$/),
      event: 'account.created',
      state: 'retrying',
      attempts: 1,
      last_status: 500,
      last_error: 'HTTP 500',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const cli = await runCommand(roost.services, 'webhooks.failures', {}, deps());
    expect(cli.failures).toEqual([failure]);

    await runCommand(roost.services, 'accounts.modify', { username: 'newcomer', approve: true }, deps());
    expect((await author.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'The Author' } })).status).toBe(200);
    const posted = await author.api('/api/v1/statuses', { body: { status: 'Hello hooks', visibility: 'public' } });
    expect(posted.status).toBe(200);
    // The object is rendered when the fact is handled (as Mastodon's worker loads it): edit after.
    await eventually(async () => received.some((r) => r.event === 'status.created'));
    expect((await author.api(`/api/v1/statuses/${posted.body.id}`, { method: 'PUT', body: { status: 'Hello hooks, edited' } })).status).toBe(200);
    const report = await plain.api('/api/v1/reports', { body: { account_id: author.account.id, status_ids: [posted.body.id], comment: 'spam', category: 'spam' } });
    expect(report.status).toBe(200);
    // report.updated: the fact the moderation side records (written here as a service would).
    await roost.services.db.sql.transaction((tx) =>
      recordEvent(roost.services, tx, { actorKind: 'report', actorId: report.body.id, origin: 'client', event: { type: 'report.updated', reportId: report.body.id } }),
    );
    await eventually(async () => received.filter((r) => r.status === 200).length >= 6, 20_000, 'the deliveries');
    expect(received.some((r) => r.event === 'account.created' && r.status === 200)).toBe(false);

    // After the backoff (Sidekiq's: at least 16 s), the retry goes through.
    clock.advance(60_000);
    await eventually(async () => received.filter((r) => r.status === 200).length >= 7, 20_000, 'the retry');
    await settled(roost);

    for (const r of received) expect(r.signature).toBe(sign(secret, r.raw));
    const ok = received.filter((r) => r.status === 200);
    expect(ok.map((r) => r.event).sort()).toEqual(
      ['account.approved', 'account.created', 'account.updated', 'report.created', 'report.updated', 'status.created', 'status.updated'].sort(),
    );
    expect(received.length).toBe(8);
    const by = (e: string) => ok.find((r) => r.event === e)!.body;
    // The retry sends the same body as the first attempt.
    expect(received.filter((r) => r.event === 'account.created').map((r) => r.raw)).toEqual([by('account.created'), by('account.created')].map((b) => JSON.stringify(b)));
    expect(by('account.created')).toEqual({
      event: 'account.created',
      created_at: expect.stringMatching(ISO),
      object: expect.objectContaining({
        id: signUp.body.id ?? expect.any(String),
        username: 'newcomer',
        domain: null,
        email: 'newcomer@example.test',
        confirmed: false,
        approved: false,
        disabled: false,
        silenced: false,
        suspended: false,
        invite_request: 'I like birds',
        locale: 'en',
        account: expect.objectContaining({ username: 'newcomer', acct: 'newcomer' }),
      }),
    });
    expect(by('account.approved').object).toMatchObject({ username: 'newcomer', approved: true });
    expect(by('account.updated').object).toMatchObject({ username: 'author', account: { display_name: 'The Author' } });
    expect(by('status.created').object).toMatchObject({ id: posted.body.id, content: '<p>Hello hooks</p>', account: { id: author.account.id } });
    expect(by('status.updated').object).toMatchObject({ id: posted.body.id, content: '<p>Hello hooks, edited</p>', edited_at: expect.stringMatching(ISO) });
    expect(by('report.created').object).toMatchObject({
      id: report.body.id,
      category: 'spam',
      comment: 'spam',
      action_taken: false,
      account: { username: 'hookplain', account: { id: plain.account.id } },
      target_account: { username: 'author' },
      statuses: [{ id: posted.body.id }],
    });
    expect(by('report.updated').object).toMatchObject({ id: report.body.id });
    expect((await admin.api(`/api/v1/admin/webhooks/${all.body.id}/failures`)).body).toEqual([]);
    expect(await count(`select count(*)::int as n from webhook_deliveries where webhook_id = $1`, [off.body.id])).toBe(0);

    // The consumer run again on a fact already handled queues nothing (its delivery row is there).
    const [fact] = await roost.services.db.sql.query<{ id: string; actor_kind: string; actor_id: string; origin: string; payload: StoredEvent }>(
      `select id::text as id, actor_kind, actor_id::text as actor_id, origin, payload from outbox_events where type = 'status.created' and payload->>'statusId' = $1`,
      [posted.body.id],
    );
    const event = upcast({ ...fact!.payload, type: 'status.created' }, fact!.actor_id)!;
    await webhooksConsumer(roost.services)({ id: fact!.id, actorKind: fact!.actor_kind, actorId: fact!.actor_id, actorVersion: null, origin: 'client', event } as never);
    await settled(roost);
    expect(received.length).toBe(8);
    expect(await count(`select count(*)::int as n from webhook_deliveries where webhook_id = $1 and state = 'delivered'`, [all.body.id])).toBe(7);
  }, 90_000);

  it('gives up at once on a 404 (Mastodon’s unsalvageable answers) and says so', async () => {
    const gone = await admin.api('/api/v1/admin/webhooks', { body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/gone`, events: ['status.created'] } });
    const original = receiver.listeners('request')[0] as (...a: unknown[]) => void;
    receiver.removeAllListeners('request');
    receiver.on('request', (req, res) => (req.url === '/gone' ? res.writeHead(404).end() : original(req, res)));
    try {
      await author.api('/api/v1/statuses', { body: { status: 'Another one' } });
      const f = await eventually(async () => {
        const list = (await admin.api(`/api/v1/admin/webhooks/${gone.body.id}/failures`)).body as any[];
        return list[0]?.state === 'failed' ? list[0] : null;
      });
      expect(f).toMatchObject({ event: 'status.created', state: 'failed', attempts: 1, last_status: 404, last_error: 'HTTP 404' });
    } finally {
      receiver.removeAllListeners('request');
      receiver.on('request', original);
    }
  });
});

describe('an instance that refuses private addresses', () => {
  it('gives up at once on a webhook at a loopback address, and sends it nothing', async () => {
    const strict = await startTestRoost({ federation: { allowPrivateAddresses: false } });
    try {
      const boss = await createTestUser(strict, 'boss', { role: 'Admin', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
      const hook = await boss.api('/api/v1/admin/webhooks', { body: { url: `${receiverUrl}?strict`, events: ['status.created'] } });
      expect(hook.status).toBe(200);
      const before = received.length;
      expect((await boss.api('/api/v1/statuses', { body: { status: 'to nowhere' } })).status).toBe(200);
      const f = await eventually(async () => ((await boss.api(`/api/v1/admin/webhooks/${hook.body.id}/failures`)).body as any[])[0]);
      expect(f).toMatchObject({ event: 'status.created', state: 'failed', attempts: 1, last_status: null, last_error: '127.0.0.1 is not a public address' });
      expect(received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
