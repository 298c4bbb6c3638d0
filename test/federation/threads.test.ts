/**
 * Complete threads (src/federation/threads.ts, services/threads.ts): four real instances on
 * loopback. A thread rooted on A with replies on B and C, read on D, whose only tie is that dan
 * follows A's author: opening the thread on D answers at once with Mastodon 4.5's async refresh,
 * and the refresh brings in the replies from B and C (through A's replies and context collections
 * and B's replies collection); the completeness reads whole afterwards, the thread rests for its
 * cooldown, and with C stopped the next refresh names C as unreachable. A and B run in
 * authorized-fetch mode, so the walk's fetches are signed. Then hostile remotes (a fake server): a
 * chain 10,000 replies deep, a loop of replies and pages, an unreachable host and one that never
 * answers: partial results, each refresh finished within its bounds, never a hang. Then what
 * Roost serves: replies and the thread's context collection, only what the requester may see.
 * Last, one host asked no faster than its rate.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { fetchRemoteStatus, newFetchBudget } from '../../src/federation/remote-statuses.ts';
import { repliesPage } from '../../src/federation/collections.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const W = 30_000;
const MIN = 60_000;
const clock = createManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
let a: TestRoost;
let b: TestRoost;
let c: TestRoost | null;
let d: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dan: TestUser;

beforeAll(async () => {
  // A and B in authorized-fetch mode: the walk must sign its fetches.
  const secure = { federation: { authorizedFetch: true } };
  [a, b, c, d] = await Promise.all([startTestRoost(secure), startTestRoost(secure), startTestRoost(), startTestRoost({}, { clock })]);
  [alice, bob, carol, dan] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(c!, 'carol'), createTestUser(d, 'dan')]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close(), d?.close()]);
});

async function follow(who: TestUser, home: TestRoost, r: TestRoost, username: string) {
  const acc = await lookupRemoteAccount(home.services, home.federation, r.at(`/users/${username}`));
  expect((await who.api(`/api/v1/accounts/${acc!.id}/follow`, { method: 'POST' })).status).toBe(200);
  await eventually(async () => (await who.api(`/api/v1/accounts/relationships?id[]=${acc!.id}`)).body[0]?.following, W, `${who.account.username} following ${username}`);
}
async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body as { id: string; uri: string };
}
async function idOn(r: TestRoost, uri: string): Promise<string | undefined> {
  return (await r.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]))[0]?.id;
}
/** The refresh named by a Mastodon-Async-Refresh header. */
function refreshOf(header: string | null): { id: string; retry: number; resultCount: number } | null {
  const m = header && /^id="([^"]+)", retry=(\d+), result_count=(\d+)$/.exec(header);
  return m ? { id: m[1]!, retry: Number(m[2]), resultCount: Number(m[3]) } : null;
}
async function finished(u: TestUser, id: string) {
  return eventually(
    async () => {
      const r = await u.api(`/api/v1_alpha/async_refreshes/${id}`);
      expect(r.status).toBe(200);
      return r.body.async_refresh.status === 'finished' ? (r.body.async_refresh as { id: string; status: string; result_count: number }) : null;
    },
    W,
    'the refresh to finish',
  );
}

describe('a thread across four instances', () => {
  it('is brought whole to a server that follows only its root author, says so, and names a server it cannot reach', async () => {
    await follow(dan, d, a, 'alice');
    await follow(bob, b, a, 'alice');
    await follow(carol, c!, b, 'bob');
    const root = await post(alice, { status: 'A thread about roosts' });
    const rootOnB = await eventually(() => idOn(b, root.uri), W, 'the root on B');
    const rootOnD = await eventually(() => idOn(d, root.uri), W, 'the root on D');
    // B replies to the root; C replies to B's reply (C learns it as bob's follower) and to the root.
    const r1 = await post(bob, { status: `@alice@${a.config.domain} from B`, in_reply_to_id: rootOnB });
    const r1OnC = await eventually(() => idOn(c!, r1.uri), W, "B's reply on C");
    const r2 = await post(carol, { status: `@bob@${b.config.domain} from C, to B`, in_reply_to_id: r1OnC });
    await eventually(() => idOn(b, r2.uri), W, "C's reply on B");
    // C fetched the root as the parent of B's reply.
    const rootOnC = await eventually(() => idOn(c!, root.uri), W, 'the root on C');
    const r3 = await post(carol, { status: `@alice@${a.config.domain} from C, to A`, in_reply_to_id: rootOnC });
    await eventually(() => idOn(a, r3.uri), W, "C's reply on A");
    // A serves nothing to an unsigned fetch.
    expect((await fetch(`${root.uri}/replies`, { headers: { accept: 'application/activity+json' } })).status).toBe(401);
    // D holds none of the replies: nobody it follows wrote or delivered them.
    for (const r of [r1, r2, r3]) expect(await idOn(d, r.uri)).toBeUndefined();

    // D's clock catches up with the others' (its replies' ids come from their published times,
    // which must then be in D's past, as they are for any backfill).
    clock.set(new Date(Date.now() + 1000));
    // Opening the thread on D answers at once, with what D has and the refresh it started.
    const opened = await dan.api(`/api/v1/statuses/${rootOnD}/context`);
    expect(opened.status).toBe(200);
    expect(opened.body.descendants).toEqual([]);
    const refresh = refreshOf(opened.headers.get('mastodon-async-refresh'));
    expect(refresh).toMatchObject({ retry: 3, resultCount: 0 });
    expect(opened.body.roost_completeness).toMatchObject({ refreshing: true });
    expect(opened.headers.get('access-control-expose-headers')).toContain('Mastodon-Async-Refresh');
    // Anonymous readers start nothing, and while it runs they see it too.
    const done = await finished(dan, refresh!.id);
    expect(done).toEqual({ id: refresh!.id, status: 'finished', result_count: 3 });

    // The thread is whole on D: the three replies, in thread order.
    const after = await dan.api(`/api/v1/statuses/${rootOnD}/context`);
    expect(after.body.descendants.map((s: { uri: string }) => s.uri)).toEqual([r1.uri, r2.uri, r3.uri]);
    expect(after.headers.get('mastodon-async-refresh')).toBeNull();
    expect(after.body.roost_completeness).toEqual({
      known_replies: 3,
      reported_replies: 3,
      statuses_checked: 4,
      unreachable_servers: [],
      complete: true,
      checked_at: expect.any(String),
      refreshing: false,
    });
    // Backfilled replies sort where they were written, and are the real ones.
    const r2OnD = after.body.descendants[1];
    expect(r2OnD.account.acct).toBe(`carol@${c!.config.domain}`);
    expect(r2OnD.in_reply_to_id).toBe(after.body.descendants[0].id);

    // Within the cooldown, opening it again fetches nothing; past it, a new refresh runs.
    clock.advance(5 * MIN);
    expect((await dan.api(`/api/v1/statuses/${rootOnD}/context`)).headers.get('mastodon-async-refresh')).toBeNull();
    expect((await dan.api(`/api/v1_alpha/async_refreshes/${refresh!.id}`)).body.async_refresh.status).toBe('finished');

    // C stops; past the cooldown the next refresh cannot reach it and says so.
    await c!.close();
    c = null;
    clock.advance(11 * MIN);
    const again = refreshOf((await dan.api(`/api/v1/statuses/${after.body.descendants[1].id}/context`)).headers.get('mastodon-async-refresh'));
    expect(again).not.toBeNull();
    expect(again!.id).not.toBe(refresh!.id);
    expect(await finished(dan, again!.id)).toMatchObject({ status: 'finished', result_count: 0 });
    const partial = (await dan.api(`/api/v1/statuses/${rootOnD}/context`)).body;
    expect(partial.descendants).toHaveLength(3);
    expect(partial.roost_completeness).toMatchObject({ unreachable_servers: [new URL(r2.uri).host], complete: false });
  }, 180_000);

  it('answers the async refresh route as Mastodon does', async () => {
    expect((await dan.api('/api/v1_alpha/async_refreshes/nope')).status).toBe(404);
    expect((await dan.api('/api/v1_alpha/async_refreshes/nope')).body).toEqual({ error: 'Not Found' });
    expect((await dan.api(`/api/v1_alpha/async_refreshes/${'x'.repeat(300)}`)).status).toBe(404);
    const anonymous = await fetch(d.at('/api/v1_alpha/async_refreshes/nope'));
    expect(anonymous.status).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------------
// Hostile remotes

interface Peer {
  base: string;
  host: string;
  gets: string[];
  close(): Promise<void>;
}

/** A server on loopback answering GETs with `doc(path)` as activity+json (404 for null; 'hang': never answers). */
async function startPeer(doc: (path: string, base: string) => unknown): Promise<Peer> {
  const gets: string[] = [];
  const hanging: http.ServerResponse[] = [];
  let base = '';
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    gets.push(path);
    const body = doc(path, base);
    if (body === 'hang') {
      hanging.push(res);
      return;
    }
    if (body === null || body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not Found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/activity+json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    base,
    host: `127.0.0.1:${port}`,
    gets,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const AS = 'https://www.w3.org/ns/activitystreams';
const actorDoc = (base: string) => ({ '@context': AS, id: `${base}/users/peer`, type: 'Person', preferredUsername: 'peer', inbox: `${base}/users/peer/inbox` });
/** A public Note `path` of the peer's actor, replying to `parent`, its replies collection `replies` (embedded). */
function noteDoc(base: string, path: string, n: number, parent: string | null, replies: unknown) {
  return {
    '@context': AS,
    id: `${base}${path}`,
    type: 'Note',
    attributedTo: `${base}/users/peer`,
    to: `${AS}#Public`,
    cc: [`${base}/users/peer/followers`],
    content: `<p>${path}</p>`,
    published: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    inReplyTo: parent,
    replies,
  };
}
const page = (base: string, path: string, items: string[], next: string | null = null) => ({
  id: `${base}${path}/replies`,
  type: 'Collection',
  first: { type: 'CollectionPage', partOf: `${base}${path}/replies`, items, ...(next ? { next } : {}) },
});

describe('hostile remote threads, and the collections served', () => {
  let e: TestRoost;
  let erin: TestUser;
  const peers: Peer[] = [];
  const roots = new Map<string, string>();
  const MAX_DEPTH = 20;
  beforeAll(async () => {
    e = await startTestRoost({ federation: { threadFetchMaxDepth: MAX_DEPTH, threadFetchTimeoutSeconds: 5, threadFetchHostRate: 200 } });
    erin = await createTestUser(e, 'erin');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await e?.close();
  });

  /** The root at `url` stored on e (as a followed account's post would be), and its refresh once opened by erin, finished. */
  async function openRemote(url: string) {
    const ctx = e.federation.createContext(new URL(e.config.publicUrl), undefined);
    const rootId = await fetchRemoteStatus(e.services, ctx, new URL(url), { depth: 0, budget: newFetchBudget() });
    expect(rootId).not.toBeNull();
    // Nobody signed in: nothing is fetched.
    const anonymous = await fetch(e.at(`/api/v1/statuses/${rootId}/context`));
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('mastodon-async-refresh')).toBeNull();
    const opened = await erin.api(`/api/v1/statuses/${rootId}/context`);
    expect(opened.status).toBe(200);
    const refresh = refreshOf(opened.headers.get('mastodon-async-refresh'));
    expect(refresh).not.toBeNull();
    const done = await finished(erin, refresh!.id);
    const context = (await erin.api(`/api/v1/statuses/${rootId}/context`)).body;
    roots.set(url, rootId!);
    return { rootId: rootId!, done, context };
  }

  it('a chain 10,000 replies deep: partial, within the depth bound', async () => {
    const peer = await startPeer((path, base) => {
      if (path === '/users/peer') return actorDoc(base);
      const m = /^\/deep\/(\d+)$/.exec(path);
      if (!m) return null;
      const n = Number(m[1]);
      if (n > 10_000) return null;
      return noteDoc(base, path, n, n === 0 ? null : `${base}/deep/${n - 1}`, page(base, path, n < 10_000 ? [`${base}/deep/${n + 1}`] : []));
    });
    peers.push(peer);
    const { done, context } = await openRemote(`${peer.base}/deep/0`);
    expect(done.result_count).toBeGreaterThan(0);
    expect(done.result_count).toBeLessThanOrEqual(MAX_DEPTH);
    expect(context.descendants).toHaveLength(done.result_count);
    // Nothing below the depth bound was asked for.
    const deepest = Math.max(...peer.gets.flatMap((p) => (/^\/deep\/(\d+)$/.exec(p) ? [Number(/\d+$/.exec(p)![0])] : [])));
    expect(deepest).toBeLessThanOrEqual(MAX_DEPTH);
    expect(context.roost_completeness).toMatchObject({ unreachable_servers: [], complete: false });
  }, 60_000);

  it('a loop of replies and of pages: each read once', async () => {
    const peer = await startPeer((path, base) => {
      if (path === '/users/peer') return actorDoc(base);
      // loop/0's replies name loop/1, and its page names itself as next; loop/1's replies name loop/0.
      if (path === '/loop/0') return noteDoc(base, path, 0, null, { id: `${base}/loop/0/replies`, type: 'Collection', first: `${base}/loop/0/page` });
      if (path === '/loop/0/page') return { '@context': AS, id: `${base}/loop/0/page`, type: 'CollectionPage', items: [`${base}/loop/1`], next: `${base}/loop/0/page` };
      if (path === '/loop/1') return noteDoc(base, path, 1, `${base}/loop/0`, page(base, path, [`${base}/loop/0`, `${base}/loop/1`], `${base}/loop/0/page`));
      return null;
    });
    peers.push(peer);
    const { done, context } = await openRemote(`${peer.base}/loop/0`);
    expect(done.result_count).toBe(1);
    expect(context.descendants.map((s: { uri: string }) => s.uri)).toEqual([`${peer.base}/loop/1`]);
    expect(peer.gets.filter((p) => p === '/loop/0/page')).toHaveLength(1);
    expect(peer.gets.filter((p) => p === '/loop/1')).toHaveLength(1);
  }, 60_000);

  it('an unreachable server is named, and what could be had is had', async () => {
    const closed = await startPeer(() => null);
    await closed.close();
    const peer = await startPeer((path, base) => {
      if (path === '/users/peer') return actorDoc(base);
      if (path === '/mixed/0') return noteDoc(base, path, 0, null, page(base, path, [`${base}/mixed/1`, `${closed.base}/notes/1`]));
      if (path === '/mixed/1') return noteDoc(base, path, 1, `${base}/mixed/0`, page(base, path, []));
      return null;
    });
    peers.push(peer);
    const { done, context } = await openRemote(`${peer.base}/mixed/0`);
    expect(done.result_count).toBe(1);
    expect(context.descendants.map((s: { uri: string }) => s.uri)).toEqual([`${peer.base}/mixed/1`]);
    expect(context.roost_completeness).toMatchObject({
      known_replies: 1,
      reported_replies: 2,
      unreachable_servers: [closed.host],
      complete: false,
    });
  }, 60_000);

  it('a server that never answers holds the refresh no longer than its time bound', async () => {
    const silent = await startPeer(() => 'hang');
    peers.push(silent);
    const peer = await startPeer((path, base) => {
      if (path === '/users/peer') return actorDoc(base);
      if (path === '/slow/0') return noteDoc(base, path, 0, null, page(base, path, [`${silent.base}/notes/1`, `${base}/slow/1`]));
      if (path === '/slow/1') return noteDoc(base, path, 1, `${base}/slow/0`, page(base, path, []));
      return null;
    });
    peers.push(peer);
    const { done, context } = await openRemote(`${peer.base}/slow/0`);
    expect(done).toMatchObject({ status: 'finished', result_count: 1 });
    expect(silent.gets).toEqual(['/notes/1']);
    // The other reply came meanwhile, and stays; the thread does not read whole.
    expect(context.descendants.map((s: { uri: string }) => s.uri)).toEqual([`${peer.base}/slow/1`]);
    expect(context.roost_completeness).toMatchObject({ known_replies: 1, reported_replies: 2, complete: false });
  }, 60_000);

  it('opening a thread costs a fixed number of statements, whatever its size', async () => {
    const deep = [...roots].find(([url]) => url.endsWith('/deep/0'))![1];
    const loop = [...roots].find(([url]) => url.endsWith('/loop/0'))![1];
    let big: { body: { descendants: unknown[] } } | undefined;
    let small: typeof big;
    const qBig = await capturedStatements(e, async () => (big = await erin.api(`/api/v1/statuses/${deep}/context`)));
    const qSmall = await capturedStatements(e, async () => (small = await erin.api(`/api/v1/statuses/${loop}/context`)));
    expect(big!.body.descendants.length).toBeGreaterThan(1);
    expect(small!.body.descendants).toHaveLength(1);
    expect(qBig).toEqual(qSmall);
  });

  it('serves replies and the thread only as the requester may see them, with their counts', async () => {
    const [pub, priv, gone, banned] = await Promise.all(['pub', 'priv', 'gone', 'banned'].map((n) => createTestUser(e, n)));
    const root = await post(erin, { status: 'Served thread' });
    const replies: Record<string, { id: string; uri: string }> = {};
    for (const [u, visibility] of [[pub, 'public'], [priv, 'private'], [gone, 'public'], [banned, 'unlisted']] as const) {
      replies[u.account.username] = await post(u, { status: 'a reply', in_reply_to_id: root.id, visibility });
    }
    expect((await gone.api(`/api/v1/statuses/${replies.gone!.id}`, { method: 'DELETE' })).status).toBe(200);
    await e.services.db.sql.query(`update accounts set suspended_at = now() where id = $1`, [banned.account.id]);
    // A thread wholly local has nothing to fetch: opening it starts nothing and writes nothing.
    const local = await erin.api(`/api/v1/statuses/${root.id}/context`);
    expect(local.headers.get('mastodon-async-refresh')).toBeNull();
    expect(local.body.roost_completeness).toEqual({
      known_replies: 0, reported_replies: 0, statuses_checked: 0, unreachable_servers: [], complete: null, checked_at: null, refreshing: false,
    });
    expect(await e.services.db.sql.query(`select 1 from thread_refreshes where root_status_id = $1`, [root.id])).toEqual([]);
    const get = async (url: string) => (await (await fetch(url, { headers: { accept: 'application/activity+json' } })).json()) as Record<string, any>;
    const note = await get(root.uri);
    expect(note.replies).toMatchObject({ id: `${root.uri}/replies`, totalItems: 1, first: { items: replies.pub!.uri } });
    const collection = await get(`${root.uri}/replies`);
    expect(collection).toMatchObject({ type: 'Collection', totalItems: 1 });
    expect([(await get(collection.first)).items].flat()).toEqual([replies.pub!.uri]);
    // The thread's collection (FEP-7888): the root and the one reply anybody may see.
    const context = await get(note.context);
    expect(context).toMatchObject({ id: note.context, type: 'Collection', totalItems: 2 });
    expect((await get(context.first)).items).toEqual([root.uri, replies.pub!.uri]);
    // A requester known by its signature (authorized fetch) is not shown the replies of an
    // author who blocks its domain.
    const [requester] = await e.services.db.sql.query<{ id: string; domain: string }>(`select id::text, domain from accounts where domain is not null limit 1`);
    await e.services.db.sql.query(`insert into account_domain_blocks (id, account_id, domain, created_at) values ($1, $2, $3, now())`, [
      e.services.ids.next(),
      pub.account.id,
      requester!.domain,
    ]);
    const rootId = root.id;
    expect((await repliesPage(e.services, rootId, null, requester!.id)).uris).toEqual([]);
    expect((await repliesPage(e.services, rootId, null, null)).uris).toEqual([replies.pub!.uri]);
  });
});

describe('the per-host rate', () => {
  let f: TestRoost;
  let fay: TestUser;
  let peer: Peer;
  beforeAll(async () => {
    f = await startTestRoost({ federation: { threadFetchHostRate: 1, threadFetchTimeoutSeconds: 3 } });
    fay = await createTestUser(f, 'fay');
    peer = await startPeer((path, base) => {
      if (path === '/users/peer') return actorDoc(base);
      const m = /^\/wide\/(\d+)$/.exec(path);
      if (!m) return null;
      const n = Number(m[1]);
      if (n === 0) return noteDoc(base, path, 0, null, page(base, path, Array.from({ length: 20 }, (_, i) => `${base}/wide/${i + 1}`)));
      return n <= 20 ? noteDoc(base, path, n, `${base}/wide/0`, page(base, path, [])) : null;
    });
  }, 60_000);
  afterAll(async () => {
    await peer?.close();
    await f?.close();
  });

  it('one host is asked no faster than its rate, however much it lists', async () => {
    const ctx = f.federation.createContext(new URL(f.config.publicUrl), undefined);
    const rootId = await fetchRemoteStatus(f.services, ctx, new URL(`${peer.base}/wide/0`), { depth: 0, budget: newFetchBudget() });
    const before = peer.gets.length;
    const refresh = refreshOf((await fay.api(`/api/v1/statuses/${rootId}/context`)).headers.get('mastodon-async-refresh'));
    const done = await finished(fay, refresh!.id);
    // At 1 request a second for 3 seconds: the root and at most three of its twenty replies.
    const asked = peer.gets.length - before;
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(4);
    expect(done.result_count).toBeLessThanOrEqual(3);
  }, 60_000);
});
