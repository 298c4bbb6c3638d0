/**
 * The lab's light peers (src/lab/peers/) on a tiny in-test network: a Map of host → NetworkHost,
 * each peer's send dispatching to it, one manual clock, a scheduler that records. Signatures are
 * real RSA signatures both ways; payload shapes are checked against the interoperability fixtures
 * (test/fixtures/activitypub/<software>/); a real Roost reads the peers' actors and notes through
 * Fedify and its own converter.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Create, isActor, Note, Object as AsObject } from '@fedify/vocab';
import { preloadedContexts, type DocumentLoader } from '@fedify/vocab-runtime';
import { createManualClock, type ManualClock } from '../../src/lib/clock.ts';
import type { NetworkHost, PeerContext, WireRequest, WireResponse } from '../../src/lab/network-types.ts';
import { createPeer, PEER_SOFTWARES, type LabPeer, type PeerSoftware } from '../../src/lab/peers/index.ts';
import { sha256Digest, signHeaders, SIGNATURE_STYLES } from '../../src/lab/peers/signing.ts';
import { softwareKey } from '../../src/lab/peers/keys.ts';
import { loadFixture } from '../fixtures/activitypub/load.ts';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { noteFields, persistAccount, visibilityFromAudience } from '../../src/federation/convert/from-as.ts';

/** A seeded stream (mulberry32), so ids differ between calls but not between runs. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Sent {
  from: string;
  req: WireRequest;
  status: number | null;
}

interface Scheduled {
  at: Date;
  fn: () => void | Promise<void>;
}

interface Net {
  clock: ManualClock;
  hosts: Map<string, NetworkHost>;
  sent: Sent[];
  scheduled: Scheduled[];
  ctx(from: string, random?: () => number): PeerContext;
  peer(name: string, software: PeerSoftware, random?: () => number): LabPeer;
  posts(from: string, to?: string): Sent[];
  bodyOf(s: Sent): Record<string, any>;
}

function network(): Net {
  const clock = createManualClock(new Date('2026-03-01T12:00:00.000Z'));
  const hosts = new Map<string, NetworkHost>();
  const sent: Sent[] = [];
  const scheduled: Scheduled[] = [];
  let seed = 1;
  const net: Net = {
    clock,
    hosts,
    sent,
    scheduled,
    ctx(from, random = seeded(seed++)) {
      return {
        clock,
        random,
        schedule: (at, fn) => void scheduled.push({ at, fn }),
        async send(req) {
          const host = hosts.get(req.url.host);
          if (!host) {
            sent.push({ from, req, status: null });
            throw new Error(`connect ECONNREFUSED ${req.url.host}`);
          }
          const res = await host.handle(req);
          sent.push({ from, req, status: res.status });
          return res;
        },
      };
    },
    peer(name, software, random) {
      const p = createPeer(name, software, net.ctx(name, random));
      hosts.set(name, p);
      return p;
    },
    posts: (from, to) => sent.filter((s) => s.from === from && s.req.method === 'POST' && (!to || s.req.url.host === to)),
    bodyOf: (s) => JSON.parse(Buffer.from(s.req.body!).toString('utf8')),
  };
  return net;
}

const INBOX_STATUS: Record<PeerSoftware, number> = { mastodon: 202, gotosocial: 202, misskey: 202, pleroma: 200 };
const SIGNED_POST_HEADERS: Record<PeerSoftware, string> = {
  mastodon: '(request-target) host date digest content-type',
  gotosocial: '(request-target) host date digest',
  misskey: '(request-target) date host digest',
  pleroma: '(request-target) content-length date digest host',
};
const ALGORITHM: Record<PeerSoftware, string> = { mastodon: 'rsa-sha256', gotosocial: 'hs2019', misskey: 'rsa-sha256', pleroma: 'rsa-sha256' };

function signatureParam(req: WireRequest, name: string): string | undefined {
  return new RegExp(`${name}="([^"]*)"`).exec(req.headers.signature ?? '')?.[1];
}

describe('two light peers of different software', () => {
  const pairs: [PeerSoftware, PeerSoftware][] = [
    ['mastodon', 'misskey'],
    ['gotosocial', 'pleroma'],
    ['pleroma', 'mastodon'],
    ['misskey', 'gotosocial'],
  ];
  for (const [sa, sb] of pairs) {
    it(`${sa} and ${sb} follow each other and exchange a post and a reply, signatures verified both ways`, async () => {
      const net = network();
      const a = net.peer('a.test', sa);
      const b = net.peer('b.test', sb);
      await a.addAccount('alice');
      await b.addAccount('bob');

      const followId = await a.follow('alice', b.actorUri('bob'));
      await b.idle();
      expect(b.followerCount('bob')).toBe(1);
      expect(a.isFollowing('alice', b.actorUri('bob'))).toBe(true);
      await b.follow('bob', a.actorUri('alice'));
      await a.idle();
      expect(a.followerCount('alice')).toBe(1);
      expect(b.isFollowing('bob', a.actorUri('alice'))).toBe(true);
      expect(followId).toMatch(/^https:\/\/a\.test\//);

      const post = await b.post('bob', { text: 'hello from bob', visibility: 'public' });
      expect(a.knows(post)).toBe(true);
      const reply = await a.post('alice', { text: '@bob@b.test hello back', visibility: 'public', inReplyTo: post });
      expect(b.knows(reply)).toBe(true);
      expect(b.repliesKnown(post)).toBe(1);
      expect(a.repliesKnown(post)).toBe(0);

      // Every POST each sent was signed in its software's style and accepted with the receiver's answer.
      for (const [from, to, software, receiver] of [
        ['a.test', 'b.test', sa, sb],
        ['b.test', 'a.test', sb, sa],
      ] as const) {
        const posts = net.posts(from, to);
        // A Follow and an Accept each way, the post one way and the reply the other.
        expect(posts).toHaveLength(3);
        for (const p of posts) {
          expect(signatureParam(p.req, 'headers')).toBe(SIGNED_POST_HEADERS[software]);
          expect(signatureParam(p.req, 'algorithm')).toBe(ALGORITHM[software]);
          expect(p.status).toBe(INBOX_STATUS[receiver]);
        }
      }
      expect(a.received).toBe(3);
      expect(b.received).toBe(3);

      // An Undo(Follow) in a's shape removes alice from bob's followers.
      const undo = await a.unfollow('alice', b.actorUri('bob'));
      expect(undo).toMatch(/^https:\/\/a\.test\//);
      expect(b.followerCount('bob')).toBe(0);
      expect(a.isFollowing('alice', b.actorUri('bob'))).toBe(false);
      expect(await a.unfollow('alice', b.actorUri('bob'))).toBeNull();
      // Each verified the other's key once, fetched by a GET signed by its instance actor.
      const keyFetches = net.sent.filter((s) => s.req.method === 'GET' && /main-key|\/users\/[^/]+$/.test(s.req.url.pathname));
      expect(keyFetches.every((s) => s.status === 200 && signatureParam(s.req, 'keyId'))).toBe(true);
    });
  }

  it('a locked account does not accept: the follower count stays 0 and no Accept is sent', async () => {
    const net = network();
    const a = net.peer('a.test', 'mastodon');
    const b = net.peer('b.test', 'gotosocial');
    await a.addAccount('alice');
    await b.addAccount('bob', { locked: true });
    await a.follow('alice', b.actorUri('bob'));
    await b.idle();
    expect(b.followerCount('bob')).toBe(0);
    expect(a.isFollowing('alice', b.actorUri('bob'))).toBe(false);
    expect(net.posts('b.test')).toHaveLength(0);
  });

  it('an Update(Question) sets the poll tallies, a Delete forgets, an Undo(Follow) removes the follower', async () => {
    const net = network();
    const a = net.peer('a.test', 'pleroma');
    const b = net.peer('b.test', 'misskey');
    await a.addAccount('alice');
    await b.addAccount('bob');
    await a.follow('alice', b.actorUri('bob'));
    await b.idle();
    // Alice's peer sends what a Roost would: signed by alice, through b's shared inbox.
    const post = await a.post('alice', { text: 'a question', visibility: 'public' });
    // Alice's peer sends what a Roost would: signed by alice's key, to b's shared inbox.
    const sendAs = async (activity: Record<string, unknown>) => {
      const body = Buffer.from(JSON.stringify(activity));
      const url = new URL('https://b.test/inbox');
      const key = { keyId: `${a.actorUri('alice')}#main-key`, privateKey: softwareKey('pleroma').privateKey };
      const headers = await signHeaders(SIGNATURE_STYLES.pleroma, key, 'POST', url, net.clock.now(), body);
      return b.handle({ method: 'POST', url, headers, body });
    };
    const question = `${post}-poll`;
    const update = {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${question}#update`,
      type: 'Update',
      actor: a.actorUri('alice'),
      object: { id: question, type: 'Question', attributedTo: a.actorUri('alice'), oneOf: [{ type: 'Note', name: 'Tea', replies: { type: 'Collection', totalItems: 5 } }, { type: 'Note', name: 'Coffee', replies: { type: 'Collection', totalItems: 2 } }] },
    };
    expect((await sendAs(update)).status).toBe(202);
    expect(b.pollTallies(question)).toEqual([5, 2]);
    expect(b.knows(question)).toBe(true);
    expect((await sendAs({ id: `${question}#delete`, type: 'Delete', actor: a.actorUri('alice'), object: question })).status).toBe(202);
    expect(b.knows(question)).toBe(false);
    expect(b.pollTallies(question)).toBeNull();
    expect(b.followerCount('bob')).toBe(1);
    const follow = net.bodyOf(net.posts('a.test', 'b.test')[0]!);
    expect(follow.type).toBe('Follow');
    expect((await sendAs({ id: `${follow.id}/undo`, type: 'Undo', actor: a.actorUri('alice'), object: follow })).status).toBe(202);
    expect(b.followerCount('bob')).toBe(0);
  });
});

describe('the inbox verifies every POST', () => {
  let net: Net;
  let capture: Sent;
  let b: LabPeer;

  beforeAll(async () => {
    net = network();
    const a = net.peer('a.test', 'mastodon');
    b = net.peer('b.test', 'misskey');
    await a.addAccount('alice');
    await b.addAccount('bob');
    await b.follow('bob', a.actorUri('alice'));
    await a.idle();
    await a.post('alice', { text: 'signed words', visibility: 'public' });
    capture = net.posts('a.test', 'b.test').at(-1)!;
    expect(net.bodyOf(capture).type).toBe('Create');
  });

  const replay = (change: Partial<WireRequest> = {}) => b.handle({ ...capture.req, ...change });

  it('the POST as sent is accepted again (the key is cached)', async () => {
    const before = b.received;
    expect((await replay()).status).toBe(202);
    expect(b.received).toBe(before + 1);
  });

  it('a tampered body gets 401, with its digest fixed or not', async () => {
    const before = b.received;
    const text = Buffer.from(capture.req.body!).toString('utf8').replace('signed words', 'forged words');
    const body = Buffer.from(text);
    expect((await replay({ body })).status).toBe(401);
    expect((await replay({ body, headers: { ...capture.req.headers, digest: sha256Digest(body) } })).status).toBe(401);
    expect(b.received).toBe(before);
  });

  it('no signature, another key, or another path gets 401', async () => {
    const { signature: _s, ...unsigned } = capture.req.headers;
    expect((await replay({ headers: unsigned })).status).toBe(401);
    const otherKey = capture.req.headers.signature!.replace(/keyId="[^"]*"/, 'keyId="https://a.test/users/nobody#main-key"');
    expect((await replay({ headers: { ...capture.req.headers, signature: otherKey } })).status).toBe(401);
    const bob = new URL(`${b.actorUri('bob')}/inbox`);
    expect((await replay({ url: bob })).status).toBe(401);
  });

  it('a signature dated outside the window (by the lab clock) gets 401', async () => {
    net.clock.advance(13 * 60 * 60 * 1000);
    try {
      expect((await replay()).status).toBe(401);
    } finally {
      net.clock.advance(-13 * 60 * 60 * 1000);
    }
  });
});

describe('failed deliveries are retried on each software’s schedule', () => {
  /** A server whose actor answers but whose inbox answers `status` (or nothing, for null). */
  function flaky(net: Net, status: number | null, headers: Record<string, string> = {}): { posts: () => number } {
    let posts = 0;
    net.hosts.set('flaky.test', {
      name: 'flaky.test',
      async handle(req): Promise<WireResponse> {
        if (req.method === 'GET') {
          const actor = { id: 'https://flaky.test/users/x', type: 'Person', preferredUsername: 'x', inbox: 'https://flaky.test/users/x/inbox' };
          return { status: 200, headers: { 'content-type': 'application/activity+json' }, body: Buffer.from(JSON.stringify(actor)) };
        }
        posts++;
        if (status === null) throw new Error('connection reset');
        return { status, headers, body: new Uint8Array(0) };
      },
    });
    return { posts: () => posts };
  }

  /** Runs every scheduled retry in time order, moving the clock; the waits in seconds. */
  async function drain(net: Net): Promise<number[]> {
    const waits: number[] = [];
    while (net.scheduled.length) {
      net.scheduled.sort((x, y) => x.at.getTime() - y.at.getTime());
      const next = net.scheduled.shift()!;
      waits.push((next.at.getTime() - net.clock.now().getTime()) / 1000);
      net.clock.set(next.at);
      await next.fn();
    }
    return waits;
  }

  // With the random stream fixed at 0.5: Sidekiq's rand(10) is 5, Misskey's jitter 10 %,
  // Pleroma's rand(1..30) 16.
  const SCHEDULES: Record<PeerSoftware, number[]> = {
    // count**4 + 15 + 5 * (count + 1), count 0…15: 16 retries, 17 tries.
    mastodon: [20, 26, 46, 116, 296, 670, 1346, 2456, 4156, 6626, 10070, 14716, 20816, 28646, 38506, 50720],
    // 2 s · 2^(n+1): 5 retries, 6 tries.
    gotosocial: [8, 16, 32, 64, 128],
    // (2^n − 1) minutes, at most 8 h, + 10 %: 11 retries, 12 tries.
    misskey: [66, 198, 462, 990, 2046, 4158, 8382, 16830, 31680, 31680, 31680],
    // n^5 + 15 + 16 n: 4 retries, 5 tries.
    pleroma: [32, 79, 306, 1103],
  };

  for (const software of PEER_SOFTWARES) {
    it(`${software}: a 503 is retried at the exact backoff times, then given up`, async () => {
      const net = network();
      const inbox = flaky(net, 503);
      const p = net.peer('p.test', software, () => 0.5);
      await p.addAccount('alice');
      await p.follow('alice', 'https://flaky.test/users/x');
      const waits = await drain(net);
      expect(waits).toEqual(SCHEDULES[software]);
      expect(inbox.posts()).toBe(SCHEDULES[software].length + 1);
      expect(p.deliveries).toEqual({ delivered: 0, failed: 1, retries: SCHEDULES[software].length });
    });

    it(`${software}: a 410 and a 404 are not retried`, async () => {
      for (const status of [410, 404]) {
        const net = network();
        const inbox = flaky(net, status);
        const p = net.peer('p.test', software, () => 0.5);
        await p.addAccount('alice');
        await p.follow('alice', 'https://flaky.test/users/x');
        expect(net.scheduled).toHaveLength(0);
        expect(inbox.posts()).toBe(1);
        expect(p.deliveries.failed).toBe(1);
      }
    });

    it(`${software}: a 429 and a dropped connection are retried`, async () => {
      for (const status of [429, null]) {
        const net = network();
        flaky(net, status);
        const p = net.peer('p.test', software, () => 0.5);
        await p.addAccount('alice');
        await p.follow('alice', 'https://flaky.test/users/x');
        expect(net.scheduled).toHaveLength(1);
        expect(net.scheduled[0]!.at.getTime() - net.clock.now().getTime()).toBe(SCHEDULES[software][0]! * 1000);
      }
    });
  }

  it('mastodon retries a 401 and not a 501, as its delivery worker does', async () => {
    const net = network();
    flaky(net, 401);
    const p = net.peer('p.test', 'mastodon', () => 0.5);
    await p.addAccount('alice');
    await p.follow('alice', 'https://flaky.test/users/x');
    expect(net.scheduled).toHaveLength(1);
    const net2 = network();
    flaky(net2, 501);
    const q = net2.peer('p.test', 'mastodon', () => 0.5);
    await q.addAccount('alice');
    await q.follow('alice', 'https://flaky.test/users/x');
    expect(net2.scheduled).toHaveLength(0);
  });

  it('gotosocial waits a Retry-After up to 10 s, and gives a host that used up its tries one try for an hour', async () => {
    const net = network();
    flaky(net, 429, { 'retry-after': '3' });
    const p = net.peer('p.test', 'gotosocial', () => 0.5);
    await p.addAccount('alice');
    await p.follow('alice', 'https://flaky.test/users/x');
    expect(net.scheduled[0]!.at.getTime() - net.clock.now().getTime()).toBe(3000);
    net.scheduled.length = 0;
    flaky(net, 503, { 'retry-after': '120' });
    await p.follow('alice', 'https://flaky.test/users/x');
    expect(await drain(net)).toEqual([10, 10, 10, 10, 10]);
    // Marked bad: the next delivery gets its one try only.
    const inbox = flaky(net, 503);
    await p.follow('alice', 'https://flaky.test/users/x');
    expect(inbox.posts()).toBe(1);
    expect(net.scheduled).toHaveLength(0);
    // An hour later it is tried again with retries.
    net.clock.advance(60 * 60 * 1000 + 1);
    await p.follow('alice', 'https://flaky.test/users/x');
    expect(net.scheduled).toHaveLength(1);
  });
});

describe('payloads in each software’s shape, as the fixtures show them', () => {
  const local = 'https://roost.test';
  const values = {
    remote: 'https://p.test',
    remote_hostname: 'p.test',
    local,
    local_host: 'roost.test',
    local_actor: `${local}/users/alice`,
    local_actor_id: '1',
    local_note: `${local}/users/alice/statuses/1`,
    local_follow: `${local}/follows/1`,
    public_key_pem: 'PEM',
    now: '2026-03-01T12:00:00Z',
    later: '2026-03-02T12:00:00Z',
  };
  const QUOTES = ['quote', '_misskey_quote', 'quoteUri', 'quoteUrl', 'quoteAuthorization'];

  /** What the peer `p.test` of `software` sent to a follower `f.test` (a Mastodon peer) while it acted. */
  async function sent(software: PeerSoftware) {
    const net = network();
    const p = net.peer('p.test', software);
    const f = net.peer('f.test', 'mastodon');
    await p.addAccount('alice');
    await f.addAccount('fan');
    await f.follow('fan', p.actorUri('alice'));
    await p.idle();
    const note = await p.post('alice', { text: '@fan@f.test hello', visibility: 'public' });
    const fanNote = await f.post('fan', { text: 'a note to like', visibility: 'public' });
    await p.follow('alice', f.actorUri('fan'));
    await p.like('alice', fanNote);
    await p.boost('alice', fanNote);
    const bodies = net.posts('p.test', 'f.test').map((s) => net.bodyOf(s));
    const byType = (t: string) => bodies.find((b) => b.type === t)!;
    const actorRes = await p.handle({ method: 'GET', url: new URL(p.actorUri('alice')), headers: {}, body: null });
    return { net, p, note, accept: byType('Accept'), create: byType('Create'), follow: byType('Follow'), like: byType('Like'), announce: byType('Announce'), actor: JSON.parse(Buffer.from(actorRes.body).toString('utf8')) };
  }

  const keys = (o: Record<string, unknown>, drop: string[] = []) => Object.keys(o).filter((k) => !drop.includes(k)).sort();
  const missing = (fixture: Record<string, unknown>, got: Record<string, unknown>, drop: string[] = []) => keys(fixture, drop).filter((k) => !(k in got));
  const contextUrls = (c: unknown) => (Array.isArray(c) ? c : [c]).filter((x) => typeof x === 'string');

  for (const software of PEER_SOFTWARES) {
    it(`${software}: Create(Note), Follow, Accept, Like, Announce and the actor carry the fixture's properties`, async () => {
      const s = await sent(software);
      const fx = (name: string) => loadFixture(software, name, values);
      const create = fx('create-note');
      expect(missing(create, s.create)).toEqual([]);
      expect(missing(create.object, s.create.object, QUOTES)).toEqual([]);
      expect(contextUrls(s.create['@context'])).toEqual(contextUrls(create['@context']));
      for (const name of ['follow', 'accept', 'like', 'announce'] as const) {
        const ours = s[name];
        // Misskey's fixture Like is a custom-emoji reaction (its `tag`); ours is the plain heart.
        expect(missing(fx(name), ours, software === 'misskey' && name === 'like' ? ['tag'] : [])).toEqual([]);
        expect(contextUrls(ours['@context'])).toEqual(contextUrls(fx(name)['@context']));
      }
      // The actor: every property of the fixture but pictures, emoji tags and profile fields' contents.
      const actor = fx('actor');
      expect(missing(actor, s.actor, ['icon', 'image', 'vcard:bday', 'vcard:Address'])).toEqual([]);
      expect(s.actor.publicKey.id).toMatch(software === 'gotosocial' ? /\/users\/alice\/main-key$/ : /#main-key$/);
    });
  }

  it('each software’s distinguishing fields and id patterns', async () => {
    const m = await sent('mastodon');
    expect(m.note).toMatch(/^https:\/\/p\.test\/users\/alice\/statuses\/\d{15,}$/);
    expect(m.create.id).toBe(`${m.note}/activity`);
    expect(m.create.object.atomUri).toBe(m.note);
    expect(m.create.object.conversation).toMatch(/^tag:p\.test,2026-03-01:objectId=\d+:objectType=Conversation$/);
    expect(m.create.object.cc).toEqual(['https://p.test/users/alice/followers', 'https://f.test/users/fan']);
    expect(m.create.object.content).toContain('<a href="https://f.test/users/fan" class="u-url mention">@<span>fan</span></a>');
    expect(m.like.id).toMatch(/^https:\/\/p\.test\/users\/alice#likes\/\d+$/);

    const g = await sent('gotosocial');
    expect(g.note).toMatch(/^https:\/\/p\.test\/users\/alice\/statuses\/[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(g.create.id).toBe(`${g.note}/activity#Create`);
    expect(Object.keys(g.create.object.interactionPolicy).sort()).toEqual(['canAnnounce', 'canLike', 'canQuote', 'canReply']);
    expect(g.create.object.to).toEqual(['https://www.w3.org/ns/activitystreams#Public', 'https://f.test/users/fan']);
    expect(g.actor.endpoints).toBeUndefined();

    const k = await sent('misskey');
    expect(k.p.actorUri('alice')).toBe('https://p.test/users/9x00000001');
    expect(k.note).toMatch(/^https:\/\/p\.test\/notes\/[0-9a-z]{10}$/);
    expect(k.create.object._misskey_content).toBe('@fan@f.test hello');
    expect(k.create.object.source).toEqual({ content: '@fan@f.test hello', mediaType: 'text/x.misskeymarkdown' });
    expect(k.like._misskey_reaction).toBe('❤');
    expect(k.follow.id).toMatch(/^https:\/\/p\.test\/follows\/9x00000001\/[0-9a-z]+$/);

    const pl = await sent('pleroma');
    expect(pl.note).toMatch(/^https:\/\/p\.test\/objects\/[0-9a-f-]{36}$/);
    expect(pl.create.id).toMatch(/^https:\/\/p\.test\/activities\/[0-9a-f-]{36}$/);
    expect(pl.create.context).toMatch(/^https:\/\/p\.test\/contexts\/[0-9a-f-]{36}$/);
    expect(pl.create.object.context).toBe(pl.create.context);
    expect(pl.create.directMessage).toBe(false);
    expect(pl.create['@context'][1]).toBe('https://p.test/schemas/litepub-0.1.jsonld');
    expect(pl.follow.state).toBe('pending');
  });

  it('a reply inherits the thread: Mastodon’s conversation, Pleroma’s context', async () => {
    for (const software of ['mastodon', 'pleroma'] as const) {
      const net = network();
      const p = net.peer('p.test', software);
      const q = net.peer('q.test', software);
      await p.addAccount('alice');
      await q.addAccount('bob');
      await q.follow('bob', p.actorUri('alice'));
      await p.follow('alice', q.actorUri('bob'));
      await p.idle();
      await q.idle();
      await p.post('alice', { text: 'root', visibility: 'public' });
      const root = net.bodyOf(net.posts('p.test', 'q.test').at(-1)!).object;
      await q.post('bob', { text: 'a reply', visibility: 'public', inReplyTo: root.id });
      const reply = net.bodyOf(net.posts('q.test', 'p.test').at(-1)!).object;
      const field = software === 'mastodon' ? 'conversation' : 'context';
      expect(reply[field]).toBe(root[field]);
      expect(reply.inReplyTo).toBe(root.id);
      expect(p.repliesKnown(root.id)).toBe(1);
    }
  });

  it('the peer serves WebFinger, host-meta, NodeInfo with its name and version, and minimal collections', async () => {
    const VERSIONS: Record<PeerSoftware, string> = { mastodon: 'mastodon', gotosocial: 'gotosocial', misskey: 'misskey', pleroma: 'pleroma' };
    for (const software of PEER_SOFTWARES) {
      const net = network();
      const p = net.peer('p.test', software);
      await p.addAccount('alice');
      const get = async (path: string) => {
        const res = await p.handle({ method: 'GET', url: new URL(path, 'https://p.test'), headers: {}, body: null });
        return { status: res.status, type: res.headers['content-type'], text: Buffer.from(res.body).toString('utf8') };
      };
      const wf = await get('/.well-known/webfinger?resource=acct:alice@p.test');
      expect(wf.status).toBe(200);
      expect(wf.type).toContain('application/jrd+json');
      expect(JSON.parse(wf.text).links.find((l: any) => l.rel === 'self').href).toBe(p.actorUri('alice'));
      expect((await get('/.well-known/webfinger?resource=acct:nobody@p.test')).status).toBe(404);
      const hm = await get('/.well-known/host-meta');
      expect(hm.text).toContain('template="https://p.test/.well-known/webfinger?resource={uri}"');
      const links = JSON.parse((await get('/.well-known/nodeinfo')).text).links;
      const ni = JSON.parse((await get(new URL(links[0].href).pathname)).text);
      expect(ni.software.name).toBe(VERSIONS[software]);
      expect(ni.software.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(ni.usage.users.total).toBe(1);
      const followers = JSON.parse((await get(new URL(`${p.actorUri('alice')}/followers`).pathname)).text);
      expect(followers).toMatchObject({ type: 'OrderedCollection', totalItems: 0 });
      const outbox = JSON.parse((await get(new URL(`${p.actorUri('alice')}/outbox`).pathname)).text);
      expect(outbox).toMatchObject({ type: 'OrderedCollection', totalItems: 0 });
      expect((await get('/nowhere')).status).toBe(404);
    }
  });
});

describe('a real Roost reads the peers through Fedify and its converter', () => {
  let roost: TestRoost;
  beforeAll(async () => {
    roost = await startTestRoost();
  });
  afterAll(async () => {
    await roost?.close();
  });

  for (const software of PEER_SOFTWARES) {
    it(`${software}: the actor is stored as a remote account and the Note converts`, async () => {
      const net = network();
      const host = `${software}.peer.test`;
      const p = net.peer(host, software);
      const f = net.peer('f.test', 'mastodon');
      await p.addAccount('alice', { displayName: 'Alice of the lab' });
      await f.addAccount('fan');
      await f.follow('fan', p.actorUri('alice'));
      await p.idle();
      const uri = await p.post('alice', { text: 'hello, <Roost> & friends', visibility: 'public' });
      // Documents come from the peer itself; the well-known contexts from Fedify's copies.
      const loader: DocumentLoader = async (url) => {
        if (Object.hasOwn(preloadedContexts, url)) return { contextUrl: null, documentUrl: url, document: preloadedContexts[url] };
        const u = new URL(url);
        if (u.host !== host) throw new Error(`not on the lab network: ${url}`);
        const res = await p.handle({ method: 'GET', url: u, headers: {}, body: null });
        if (res.status !== 200) throw new Error(`${res.status} for ${url}`);
        return { contextUrl: null, documentUrl: url, document: JSON.parse(Buffer.from(res.body).toString('utf8')) };
      };
      const opts = { documentLoader: loader, contextLoader: loader };

      const actor = await AsObject.fromJsonLd((await loader(p.actorUri('alice'))).document, opts);
      expect(isActor(actor)).toBe(true);
      const account = await persistAccount(roost.services, actor as Parameters<typeof persistAccount>[1]);
      expect(account.username).toBe('alice');
      expect(account.domain).toBe(host);
      expect(account.displayName).toBe('Alice of the lab');
      expect(account.inboxUrl).toBe(`${p.actorUri('alice')}/inbox`);
      expect(account.sharedInboxUrl).toBe(software === 'gotosocial' ? null : `https://${host}/inbox`);

      const note = await Note.fromJsonLd((await loader(uri)).document, opts);
      const fields = await noteFields(note, { now: roost.services.clock.now(), maxAttachments: 4 });
      expect(fields.uri).toBe(uri);
      expect(fields.content).toContain('hello, &lt;Roost&gt; &amp; friends');
      expect(visibilityFromAudience(fields.to, fields.cc, `${p.actorUri('alice')}/followers`)).toBe('public');

      // The Create as delivered parses too, its object the same Note.
      const delivered = net.bodyOf(net.posts(host, 'f.test').find((s) => net.bodyOf(s).type === 'Create')!);
      const create = await Create.fromJsonLd(delivered, opts);
      const object = await create.getObject(opts);
      expect(object?.id?.href).toBe(uri);
      expect(create.actorId?.href).toBe(p.actorUri('alice'));
    });
  }
});

describe('memory', () => {
  it('250 peers with 2 accounts each stay under 60 MB of heap', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const net = network();
    // The four software keys are made once per process: made before the baseline.
    for (const s of PEER_SOFTWARES) createPeer(`warm-${s}.test`, s, net.ctx('warm'));
    gc();
    const before = process.memoryUsage().heapUsed;
    const peers: LabPeer[] = [];
    for (let i = 0; i < 250; i++) {
      const p = createPeer(`peer${i}.test`, PEER_SOFTWARES[i % 4]!, net.ctx(`peer${i}.test`));
      await p.addAccount('alice');
      await p.addAccount('bob');
      // Each also serves its actor once, as the first contact of a scenario would ask.
      await p.handle({ method: 'GET', url: new URL(p.actorUri('alice')), headers: {}, body: null });
      peers.push(p);
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    console.log(`250 light peers, 2 accounts each: heap +${(grown / 1024 / 1024).toFixed(2)} MB (${Math.round(grown / 250)} bytes a peer)`);
    expect(peers).toHaveLength(250);
    expect(grown).toBeLessThan(60 * 1024 * 1024);
  });
});
