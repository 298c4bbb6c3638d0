/**
 * A local status mentioning a remote account Roost has never seen (issue 26 item 12): the handle is
 * resolved at post time (WebFinger, then the actor, through the bounded fetcher), the mention is
 * linked, listed in `mentions`, and the account's server gets the Create (an edit's new mention:
 * the Update). Bounded: at most MAX_MENTION_LOOKUPS handles per status, each within
 * federation.mentionLookupTimeoutSeconds; a handle that cannot be resolved (no such account, an
 * unreachable or silent server) stays plain text and the post goes through.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';
import { MAX_MENTION_LOOKUPS } from '../../src/services/remote-mentions.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let carol: TestUser; // on B; A has never heard of her
let mastodon: FakeSoftware;
let pleroma: FakeSoftware;
let silent: net.Server; // accepts connections, never answers
const held: net.Socket[] = [];

beforeAll(async () => {
  [a, b, mastodon, pleroma] = await Promise.all([
    startTestRoost({ federation: { mentionLookupTimeoutSeconds: 2 } }),
    startTestRoost(),
    startFakeSoftware('mastodon'),
    startFakeSoftware('pleroma'),
  ]);
  [alice, carol] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'carol')]);
  silent = net.createServer((s) => void held.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
}, 120_000);
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise<void>((r) => silent?.close(() => r()));
  await Promise.all([a?.close(), b?.close(), mastodon?.close(), pleroma?.close()]);
});

const hostOf = (base: string) => new URL(base).host;

async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body;
}

async function knownOnA(uri: string) {
  return a.services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1`, [uri]);
}

describe('mentions of remote accounts not seen before', () => {
  it('resolves the handle, links it, lists it in mentions and delivers the Create to that server', async () => {
    expect(await knownOnA(b.at('/users/carol'))).toEqual([]);
    const s = await post(alice, { status: `Hello @carol@${b.config.domain}!` });
    const [carolOnA] = await knownOnA(b.at('/users/carol'));
    expect(carolOnA).toBeDefined();
    expect(s.content).toBe(
      `<p>Hello <span class="h-card" translate="no"><a href="${b.at('/@carol')}" class="u-url mention">@<span>carol</span></a></span>!</p>`,
    );
    expect(s.mentions).toEqual([{ id: carolOnA!.id, username: 'carol', acct: `carol@${b.config.domain}`, url: b.at('/@carol') }]);
    const [row] = await a.services.db.sql.query(`select account_id::text, silent from mentions where status_id = $1`, [s.id]);
    expect(row).toEqual({ account_id: carolOnA!.id, silent: false });

    // Carol follows nobody on A: only the mention brings it to B, where she is told.
    const onB = await eventually(
      async () => (await b.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [s.uri]))[0],
      20_000,
      'the Create on B',
    );
    const mentioned = await b.services.db.sql.query(`select account_id::text from mentions where status_id = $1`, [onB.id]);
    expect(mentioned).toEqual([{ account_id: carol.account.id }]);
    const n = await eventually(async () => {
      const r = await carol.api('/api/v1/notifications?types[]=mention');
      return (r.body as any[]).length ? r.body : null;
    }, 20_000, "carol's mention notification");
    expect(n[0]).toMatchObject({ type: 'mention', status: { uri: s.uri } });
  });

  it('delivers the Create to the inbox of an account on a Mastodon server', async () => {
    const s = await post(alice, { status: `@mona@${hostOf(mastodon.base)} hi`, visibility: 'direct' });
    expect(mastodon.webfingers).toEqual([`acct:mona@${hostOf(mastodon.base)}`]);
    expect(s.content).toContain(`<a href="${mastodon.base}/@mona" class="u-url mention">@<span>mona</span></a>`);
    expect(s.mentions).toMatchObject([{ username: 'mona', acct: `mona@${hostOf(mastodon.base)}` }]);
    const create = await eventually(
      async () => mastodon.posts.find((p) => p.body.type === 'Create' && (p.body.object as any)?.id === s.uri),
      20_000,
      'the Create at the Mastodon inbox',
    );
    // A direct status, addressed to her and tagged, at her server's shared inbox.
    expect(create.path).toBe('/inbox');
    expect([create.body.to].flat()).toEqual([`${mastodon.base}/users/mona`]);
    expect([(create.body.object as any).tag].flat()).toEqual([{ type: 'Mention', href: `${mastodon.base}/users/mona`, name: `@mona@${hostOf(mastodon.base)}` }]);
  });

  it('resolves a handle an edit adds, and sends the Update there', async () => {
    const s = await post(alice, { status: 'Before the edit' });
    const r = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: `After the edit, cc @pleo@${hostOf(pleroma.base)}` } });
    expect(r.status).toBe(200);
    expect(pleroma.webfingers).toEqual([`acct:pleo@${hostOf(pleroma.base)}`]);
    expect(r.body.content).toContain(`class="u-url mention">@<span>pleo</span></a>`);
    expect(r.body.mentions).toMatchObject([{ username: 'pleo', acct: `pleo@${hostOf(pleroma.base)}` }]);
    const update = await eventually(
      async () => pleroma.posts.find((p) => p.body.type === 'Update' && (p.body.object as any)?.id === s.uri),
      20_000,
      'the Update at the Pleroma inbox',
    );
    expect(JSON.stringify((update.body.object as any).tag)).toContain(`${pleroma.base}/users/pleo`);
  });

  it(`looks up at most ${MAX_MENTION_LOOKUPS} unknown handles per status; the rest stay text`, async () => {
    const host = hostOf(mastodon.base);
    const before = mastodon.webfingers.length;
    const names = Array.from({ length: MAX_MENTION_LOOKUPS }, (_, i) => `nobody${i}`);
    // mona_new exists there, but comes after the cap: not looked up, left as text.
    const s = await post(alice, { status: `${names.map((n) => `@${n}@${host}`).join(' ')} @mona_new@${host}` });
    expect(mastodon.webfingers.slice(before)).toEqual(names.map((n) => `acct:${n}@${host}`));
    expect(s.mentions).toEqual([]);
    expect(s.content).toBe(`<p>${names.map((n) => `@${n}@${host}`).join(' ')} @mona_new@${host}</p>`);
    expect(await knownOnA(`${mastodon.base}/users/mona_new`)).toEqual([]);
  });

  it('posts with plain text when the server is unreachable, silent, or has no such account', async () => {
    const handles = [
      `@ghost@127.0.0.1:1`, // connection refused
      `@ghost@${hostOf(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`)}`, // never answers
      `@nobody@${hostOf(b.url)}`, // answers 404
      `@ghost@unreachable.invalid`, // no such name
    ];
    const s = await post(alice, { status: `Hi ${handles.join(' and ')}` });
    expect(s.mentions).toEqual([]);
    expect(s.content).toBe(`<p>Hi ${handles.join(' and ')}</p>`);
    const [row] = await a.services.db.sql.query<{ n: number }>(`select count(*)::int as n from mentions where status_id = $1`, [s.id]);
    expect(row!.n).toBe(0);
    // The silent server did get the connection: the lookup was tried, and abandoned.
    expect(held.length).toBeGreaterThan(0);
  });
});
