/**
 * Statuses across two real instances (real HTTP, real signatures): posts of each visibility reach
 * the other side with the right audience and mentions; replies thread; boosts, favourites and
 * their Undos converge; an Update(Note) edits; a Delete removes on both and leaves a Tombstone;
 * Notes, activities and the outbox are served; hostile objects are refused and a peer serving an
 * endless reply chain costs a bounded number of fetches.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Create, Mention, Note, PUBLIC_COLLECTION } from '@fedify/vocab';
import { capturedStatements, startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { recordEvent } from '../../src/services/actor-store.ts';
import { REMOTE_FETCH_LIMITS } from '../../src/federation/loaders.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B, follows alice
let carol: TestUser; // on B, follows nobody
let bobOnA: Account;
let carolOnA: Account;

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob, carol] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(b, 'carol')]);
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
  carolOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/carol')))!;
  const follow = await followAccount(b.services, bob.account.id, aliceOnB.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body;
}

interface Row {
  id: string;
  account_id: string;
  visibility: string;
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  language: string | null;
  in_reply_to_id: string | null;
  reblog_of_id: string | null;
  local: boolean;
  deleted: boolean;
  edited_at: string | null;
}

async function row(r: TestRoost, uri: string): Promise<Row | undefined> {
  const [x] = await r.services.db.sql.query<Row>(
    `select id::text, account_id::text, visibility, content, spoiler_text, sensitive, language, in_reply_to_id::text,
            reblog_of_id::text, local, deleted_at is not null as deleted, edited_at
       from statuses where uri = $1`,
    [uri],
  );
  return x;
}
const arrived = (r: TestRoost, uri: string) => eventually(() => row(r, uri), 20_000, `${uri} to arrive`);

async function mentionsOn(r: TestRoost, statusId: string) {
  return r.services.db.sql.query<{ uri: string; silent: boolean }>(
    `select a.uri, m.silent from mentions m join accounts a on a.id = m.account_id where m.status_id = $1 order by m.silent, a.uri`,
    [statusId],
  );
}

async function stats(r: TestRoost, statusId: string) {
  const [s] = await r.services.db.sql.query<{ replies_count: number; reblogs_count: number; favourites_count: number }>(
    `select replies_count, reblogs_count, favourites_count from status_stats where status_id = $1`,
    [statusId],
  );
  return s ?? { replies_count: 0, reblogs_count: 0, favourites_count: 0 };
}

let publicStatus: { id: string; uri: string; content: string };
const publicStatusId = () => publicStatus.id;

describe('statuses between two instances', () => {

  it('a public post reaches the follower with its mention, hashtag, spoiler and language', async () => {
    publicStatus = await post(alice, { status: `Hello @carol@${b.config.domain} #Roost`, spoiler_text: 'cw', language: 'en' });
    const onB = await arrived(b, publicStatus.uri);
    expect(onB).toMatchObject({
      visibility: 'public',
      // A's HTML through B's sanitiser (as Mastodon's: remote links open in a new tab, nofollow).
      content:
        `<p>Hello <span class="h-card"><a href="${b.at('/@carol')}" rel="nofollow noopener" target="_blank" class="u-url mention">@<span>carol</span></a></span> ` +
        `<a href="${a.at('/tags/Roost')}" rel="nofollow noopener" target="_blank" class="mention hashtag">#<span>Roost</span></a></p>`,
      spoiler_text: 'cw',
      sensitive: true,
      language: 'en',
      local: false,
      in_reply_to_id: null,
      deleted: false,
    });
    expect(await mentionsOn(b, onB.id)).toEqual([{ uri: b.at('/users/carol'), silent: false }]);
    // Through B's API, as bob sees it.
    const seen = await bob.api(`/api/v1/statuses/${onB.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({
      uri: publicStatus.uri,
      url: a.at(`/@alice/${publicStatus.id}`),
      visibility: 'public',
      tags: [{ name: 'roost' }],
      mentions: [{ id: carol.account.id, acct: 'carol' }],
      account: { acct: `alice@${a.config.domain}` },
    });
  });

  it('a private post reaches followers as private; a direct one only the mentioned, as direct', async () => {
    const priv = await post(alice, { status: 'followers only', visibility: 'private' });
    const direct = await post(alice, { status: `@carol@${b.config.domain} just you`, visibility: 'direct' });
    expect((await arrived(b, priv.uri)).visibility).toBe('private');
    const d = await arrived(b, direct.uri);
    expect(d.visibility).toBe('direct');
    expect(await mentionsOn(b, d.id)).toEqual([{ uri: b.at('/users/carol'), silent: false }]);
    // Carol sees the direct post; bob (a follower, not mentioned) does not; bob sees the private one.
    expect((await carol.api(`/api/v1/statuses/${d.id}`)).status).toBe(200);
    expect((await bob.api(`/api/v1/statuses/${d.id}`)).status).toBe(404);
    expect((await bob.api(`/api/v1/statuses/${(await row(b, priv.uri))!.id}`)).status).toBe(200);
    expect((await carol.api(`/api/v1/statuses/${(await row(b, priv.uri))!.id}`)).status).toBe(404);
  });

  it('serves the Note at its URI and at /@user/:id; private ones not to unsigned fetches; the outbox pages', async () => {
    const res = await fetch(publicStatus.uri, { headers: AP });
    expect(res.status).toBe(200);
    const note = (await res.json()) as Record<string, unknown>;
    delete note['@context'];
    expect(note).toEqual({
      id: publicStatus.uri,
      type: 'Note',
      attributedTo: a.at('/users/alice'),
      to: 'as:Public',
      cc: [a.at('/users/alice/followers'), b.at('/users/carol')],
      content: publicStatus.content,
      contentMap: { en: publicStatus.content },
      summary: 'cw',
      sensitive: true,
      published: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      url: a.at(`/@alice/${publicStatus.id}`),
      // Mastodon's OStatus terms: its URI and its thread; the thread rooted here as a collection (FEP-7888).
      atomUri: publicStatus.uri,
      conversation: expect.stringMatching(new RegExp(`^tag:${a.config.domain.replace(/\./g, '\\.')},\\d{4}-\\d\\d-\\d\\d:objectId=\\d+:objectType=Conversation$`)),
      context: expect.stringMatching(new RegExp(`^${a.url}/contexts/\\d+$`)),
      tag: [
        { type: 'Mention', href: b.at('/users/carol'), name: `@carol@${b.config.domain}` },
        { type: 'Hashtag', href: a.at('/tags/Roost'), name: '#Roost' },
      ],
      // No replies, favourites or boosts yet (test/federation/instance-actor.test.ts has some).
      replies: {
        id: `${publicStatus.uri}/replies`,
        type: 'Collection',
        totalItems: 0,
        first: { id: `${publicStatus.uri}/replies?cursor=first`, type: 'CollectionPage', partOf: `${publicStatus.uri}/replies` },
      },
      likes: { id: `${publicStatus.uri}/likes`, type: 'Collection', totalItems: 0 },
      shares: { id: `${publicStatus.uri}/shares`, type: 'Collection', totalItems: 0 },
      // Who may quote it without review (FEP-044f, as Mastodon's NoteSerializer): anyone.
      interactionPolicy: { canQuote: { automaticApproval: 'as:Public' } },
    });
    const viaUrl = await fetch(a.at(`/@alice/${publicStatus.id}`), { headers: AP });
    expect(viaUrl.status).toBe(200);
    expect(((await viaUrl.json()) as { id: string }).id).toBe(publicStatus.uri);
    // Without an ActivityPub Accept the link is the status's page (test/web/pages.test.ts).
    const page = await fetch(a.at(`/@alice/${publicStatus.id}`));
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);

    const priv = await post(alice, { status: 'secret', visibility: 'private' });
    expect((await fetch(priv.uri, { headers: AP })).status).toBe(401);
    expect((await fetch(a.at(`/@alice/${priv.id}`), { headers: AP })).status).toBe(404);
    // A signed fetch by a follower's server (bob's key) gets it.
    const bctx = b.federation.createContext(new URL(b.url), undefined);
    const loader = await bctx.getDocumentLoader({ identifier: 'bob' });
    expect(((await loader(priv.uri)).document as { type: string }).type).toBe('Note');

    const outbox = (await (await fetch(a.at('/users/alice/outbox'), { headers: AP })).json()) as { first: string; totalItems: number };
    expect(outbox.totalItems).toBeGreaterThanOrEqual(3);
    const first = (await (await fetch(outbox.first, { headers: AP })).json()) as { orderedItems: { type: string; object: { id: string } }[] };
    // Public and unlisted only: the public post is there, the private ones are not.
    expect(first.orderedItems.map((i) => i.object.id)).toEqual([publicStatus.uri]);
    expect(first.orderedItems[0]!.type).toBe('Create');
    // The activity of a post at its id.
    const activity = (await (await fetch(`${publicStatus.uri}/activity`, { headers: AP })).json()) as { type: string; object: { id: string } };
    expect([activity.type, activity.object.id]).toEqual(['Create', publicStatus.uri]);
  });

  let replyOnB: { id: string; uri: string };
  it('a reply from B threads on A and counts there', async () => {
    const parentOnB = (await row(b, publicStatus.uri))!;
    replyOnB = await post(bob, { status: `@alice@${a.config.domain} indeed`, in_reply_to_id: parentOnB.id });
    const onA = await arrived(a, replyOnB.uri);
    expect(onA.in_reply_to_id).toBe(publicStatus.id);
    expect(onA.visibility).toBe('public');
    expect(await mentionsOn(a, onA.id)).toEqual([{ uri: a.at('/users/alice'), silent: false }]);
    expect((await alice.api(`/api/v1/statuses/${publicStatus.id}`)).body.replies_count).toBe(1);
    const ctx = await alice.api(`/api/v1/statuses/${publicStatus.id}/context`);
    expect(ctx.body.descendants.map((s: { uri: string }) => s.uri)).toEqual([replyOnB.uri]);
  });

  it('boosts and favourites from B count on A, and their Undos take them back', async () => {
    const onB = (await row(b, publicStatus.uri))!;
    expect((await bob.api(`/api/v1/statuses/${onB.id}/reblog`, { method: 'POST' })).status).toBe(200);
    expect((await bob.api(`/api/v1/statuses/${onB.id}/favourite`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => {
      const s = await stats(a, publicStatus.id);
      return s.reblogs_count === 1 && s.favourites_count === 1;
    }, 20_000, 'the Announce and the Like on A');
    const [reblog] = await a.services.db.sql.query<{ account_id: string; visibility: string }>(
      `select account_id::text, visibility from statuses where reblog_of_id = $1 and deleted_at is null`,
      [publicStatus.id],
    );
    expect(reblog).toEqual({ account_id: bobOnA.id, visibility: 'public' });
    expect((await alice.api(`/api/v1/statuses/${publicStatus.id}/favourited_by`)).body.map((x: { id: string }) => x.id)).toEqual([bobOnA.id]);

    expect((await bob.api(`/api/v1/statuses/${onB.id}/unreblog`, { method: 'POST' })).status).toBe(200);
    expect((await bob.api(`/api/v1/statuses/${onB.id}/unfavourite`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => {
      const s = await stats(a, publicStatus.id);
      return s.reblogs_count === 0 && s.favourites_count === 0;
    }, 20_000, 'the Undos on A');
    expect(await a.services.db.sql.query(`select 1 from statuses where reblog_of_id = $1 and deleted_at is null`, [publicStatus.id])).toEqual([]);
    expect(await a.services.db.sql.query(`select 1 from favourites where status_id = $1`, [publicStatus.id])).toEqual([]);

    // And the other way: alice favourites bob's reply on A; B counts it.
    const replyOnA = (await row(a, replyOnB.uri))!;
    expect((await alice.api(`/api/v1/statuses/${replyOnA.id}/favourite`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => (await stats(b, replyOnB.id)).favourites_count === 1, 20_000, 'the Like on B');
  });

  it('an Update(Note) from the author edits the status on the other side', async () => {
    // B's bob edits (the edit API is another branch's): the row changes and status.updated is recorded.
    // Now, not a second ago: an `updated` not after `published` is ignored (from-as.ts), and the
    // reply may be younger than a second on a fast run.
    const editedAt = new Date();
    await b.services.db.sql.query(`update statuses set content = '<p>edited <b>text</b><script>x()</script></p>', sensitive = true, spoiler_text = 'now with cw', edited_at = $2 where id = $1`, [
      replyOnB.id,
      editedAt,
    ]);
    // The fact the edits branch records: effects/federate.ts sends the Update(Note).
    await b.services.db.sql.transaction((sql) =>
      recordEvent(b.services, sql, {
        actorKind: 'status',
        actorId: replyOnB.id,
        origin: 'client',
        event: { type: 'status.updated', statusId: replyOnB.id, accountId: bob.account.id, local: true },
      }),
    );
    const onA = await eventually(async () => {
      const r = await row(a, replyOnB.uri);
      return r?.edited_at ? r : null;
    }, 20_000, 'the Update on A');
    expect(onA).toMatchObject({ content: '<p>edited <b>text</b></p>', sensitive: true, spoiler_text: 'now with cw' });
    expect(new Date(onA.edited_at!).getTime()).toBe(editedAt.getTime());
    const [fact] = await a.services.db.sql.query<{ origin: string }>(`select origin from outbox_events where type = 'status.updated' and actor_id = $1`, [onA.id]);
    expect(fact).toEqual({ origin: 'federation' });
  });

  it('a Delete removes the status on both sides and leaves a Tombstone at its URI', async () => {
    const doomed = await post(alice, { status: 'soon gone' });
    const onB = await arrived(b, doomed.uri);
    expect((await bob.api(`/api/v1/statuses/${onB.id}/reblog`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => (await stats(a, doomed.id)).reblogs_count === 1, 20_000, 'the boost on A');
    expect((await alice.api(`/api/v1/statuses/${doomed.id}`, { method: 'DELETE' })).status).toBe(200);
    await eventually(async () => (await row(b, doomed.uri))?.deleted, 20_000, 'the Delete on B');
    // B's reblog of it went with it.
    expect(await b.services.db.sql.query(`select 1 from statuses where reblog_of_id = $1 and deleted_at is null`, [onB.id])).toEqual([]);
    expect((await bob.api(`/api/v1/statuses/${onB.id}`)).status).toBe(404);
    const res = await fetch(doomed.uri, { headers: AP });
    const tomb = (await res.json()) as Record<string, unknown>;
    expect([res.status, tomb.type, tomb.id]).toEqual([200, 'Tombstone', doomed.uri]);
  });
});

describe('statuses A has not seen', () => {
  it("a boost of another account's status fetches it (within the limits), then reblogs it", async () => {
    // alice follows bob, so bob's boosts reach A; carol's posts do not (nobody on A follows her).
    const follow = await followAccount(a.services, alice.account.id, bobOnA.id);
    await eventually(async () => (await a.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
    const carols = await post(carol, { status: 'from carol #tea', language: 'fr' });
    await settled(a, b);
    expect(await row(a, carols.uri)).toBeUndefined();
    expect((await bob.api(`/api/v1/statuses/${carols.id}/reblog`, { method: 'POST' })).status).toBe(200);
    const fetched = await arrived(a, carols.uri);
    expect(fetched).toMatchObject({ account_id: carolOnA.id, visibility: 'public', language: 'fr', local: false });
    await eventually(async () => (await stats(a, fetched.id)).reblogs_count === 1, 20_000, 'the reblog on A');
    const [reblog] = await a.services.db.sql.query<{ account_id: string; uri: string }>(
      `select account_id::text, uri from statuses where reblog_of_id = $1 and deleted_at is null`,
      [fetched.id],
    );
    const [bobsReblog] = await b.services.db.sql.query<{ uri: string }>(`select uri from statuses where reblog_of_id = $1`, [carols.id]);
    expect(reblog).toEqual({ account_id: bobOnA.id, uri: bobsReblog!.uri });
    // B serves the Announce at its id.
    const announce = (await (await fetch(bobsReblog!.uri, { headers: AP })).json()) as Record<string, unknown>;
    expect([announce.type, announce.id, announce.actor, announce.object, announce.to, announce.cc]).toEqual([
      'Announce', bobsReblog!.uri, b.at('/users/bob'), carols.uri, 'as:Public', [b.at('/users/carol'), b.at('/users/bob/followers')],
    ]);
  });

  it('an outbox page costs a fixed number of statements, whatever its size', async () => {
    const dora = await createTestUser(a, 'dora');
    const page = async () => {
      const outbox = (await (await fetch(a.at('/users/dora/outbox'), { headers: AP })).json()) as { first: string };
      return (await (await fetch(outbox.first, { headers: AP })).json()) as { orderedItems: { type: string }[] };
    };
    await post(dora, { status: 'one #tag' });
    expect((await dora.api(`/api/v1/statuses/${publicStatusId()}/reblog`, { method: 'POST' })).status).toBe(200);
    let small: Awaited<ReturnType<typeof page>> | undefined;
    let large: typeof small;
    const q2 = await capturedStatements(a, async () => (small = await page()));
    for (let i = 0; i < 8; i++) await post(dora, { status: `post ${i} @alice #t${i}` });
    const q10 = await capturedStatements(a, async () => (large = await page()));
    expect([small!.orderedItems.map((i) => i.type), large!.orderedItems.length]).toEqual([['Announce', 'Create'], 10]);
    expect(q10).toEqual(q2);
  });
});

describe('hostile input', () => {
  /**
   * Sends the activities from B's `who` to A (alice's inbox, or the shared inbox), then a marker
   * Create that mentions alice, and waits for the marker: A handles one sender's activities in order.
   */
  async function sendFrom(who: 'bob' | 'carol', inbox: string, ...activities: Create[]) {
    const ctx = b.federation.createContext(new URL(b.url), undefined);
    const to = { id: new URL(a.at('/users/alice')), inboxId: new URL(a.at(inbox)) };
    for (const activity of activities) await ctx.sendActivity({ identifier: who }, to, activity);
    const marker = b.at(`/users/${who}/statuses/marker${Date.now()}`);
    const tag = new Mention({ href: new URL(a.at('/users/alice')), name: `@alice@${a.config.domain}` });
    await ctx.sendActivity({ identifier: who }, to, createOf(note(marker, { content: 'marker', attribution: new URL(b.at(`/users/${who}`)), tags: [tag] }), who));
    await arrived(a, marker);
    await settled(a, b);
  }
  const sendFromBob = (...activities: Create[]) => sendFrom('bob', '/users/alice/inbox', ...activities);
  const note = (id: string, o: Partial<ConstructorParameters<typeof Note>[0]> = {}) =>
    new Note({ id: new URL(id), attribution: new URL(b.at('/users/bob')), to: PUBLIC_COLLECTION, content: 'x', ...o });
  const createOf = (n: Note, who = 'bob') =>
    new Create({ id: new URL(`${n.id!.href}/activity`), actor: new URL(b.at(`/users/${who}`)), to: PUBLIC_COLLECTION, object: n });

  it('drops a Create at the shared inbox that concerns nobody here (no local follower, mention or thread)', async () => {
    const unrelated = b.at('/users/carol/statuses/unrelated');
    const mentioning = b.at('/users/carol/statuses/mentioning');
    const tag = new Mention({ href: new URL(a.at('/users/alice')), name: `@alice@${a.config.domain}` });
    await sendFrom(
      'carol',
      '/inbox',
      createOf(note(unrelated, { attribution: new URL(b.at('/users/carol')) }), 'carol'),
      createOf(note(mentioning, { attribution: new URL(b.at('/users/carol')), tags: [tag] }), 'carol'),
    );
    expect(await row(a, unrelated)).toBeUndefined();
    expect((await row(a, mentioning))!.visibility).toBe('public');
  });

  it('refuses a Note attributed to another actor than the signer, or with an id on another host; sanitises content', async () => {
    const forged = b.at('/users/bob/statuses/forged');
    const elsewhere = a.at('/users/alice/statuses/1234');
    const scripted = b.at('/users/bob/statuses/scripted');
    await sendFromBob(
      createOf(note(forged, { attribution: new URL(b.at('/users/carol')) })),
      createOf(note(elsewhere)),
      createOf(note(scripted, { content: '<p>hi<script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">there</a></p>' })),
    );
    expect(await row(a, forged)).toBeUndefined();
    expect(await row(a, elsewhere)).toBeUndefined();
    expect((await row(a, scripted))!.content).toBe('<p>hi<span>there</span></p>');
  });

  it('a Note addressed to an account it does not tag is limited (a silent mention); a Create sent twice is applied once', async () => {
    const statusesOfBob = async () =>
      (await a.services.db.sql.query<{ n: number }>(`select statuses_count as n from account_stats where account_id = $1`, [bobOnA.id]))[0]?.n ?? 0;
    const before = await statusesOfBob();
    const limited = b.at('/users/bob/statuses/limited');
    const create = createOf(note(limited, { to: new URL(a.at('/users/alice')), content: 'psst' }));
    await sendFromBob(create, create);
    const r = (await row(a, limited))!;
    expect(r.visibility).toBe('limited');
    expect(await mentionsOn(a, r.id)).toEqual([{ uri: a.at('/users/alice'), silent: true }]);
    // The limited note and the marker: two statuses, not three.
    expect(await statusesOfBob()).toBe(before + 2);
    expect((await alice.api(`/api/v1/statuses/${r.id}`)).body.visibility).toBe('private');
  });

  it('a mentioned account A does not know yet is fetched and mentioned', async () => {
    await createTestUser(b, 'dave');
    const mentioning = b.at('/users/bob/statuses/mentions-dave');
    const tags = [new Mention({ href: new URL(b.at('/users/dave')), name: `@dave@${b.config.domain}` })];
    await sendFromBob(createOf(note(mentioning, { tags })));
    const r = (await row(a, mentioning))!;
    expect(await mentionsOn(a, r.id)).toEqual([
      { uri: b.at('/users/dave'), silent: false },
      { uri: a.at('/users/alice'), silent: true },
    ]);
  });

  it('a reply to an endless chain fetches within the depth and fetch limits', async () => {
    let requests = 0;
    let base = '';
    const peer: Server = createServer((req, res) => {
      requests++;
      const path = req.url ?? '/';
      res.setHeader('content-type', 'application/activity+json');
      if (path === '/actor') {
        res.end(JSON.stringify({
          '@context': 'https://www.w3.org/ns/activitystreams',
          id: `${base}/actor`,
          type: 'Person',
          preferredUsername: 'chain',
          inbox: `${base}/inbox`,
        }));
        return;
      }
      const n = Number(/^\/notes\/(\d+)$/.exec(path)?.[1] ?? NaN);
      if (!Number.isFinite(n)) {
        res.statusCode = 404;
        res.end('{}');
        return;
      }
      res.end(JSON.stringify({
        '@context': 'https://www.w3.org/ns/activitystreams',
        id: `${base}/notes/${n}`,
        type: 'Note',
        attributedTo: `${base}/actor`,
        to: 'https://www.w3.org/ns/activitystreams#Public',
        content: `link ${n}`,
        inReplyTo: `${base}/notes/${n + 1}`,
      }));
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    try {
      const reply = b.at('/users/bob/statuses/chainreply');
      await sendFromBob(createOf(note(reply, { replyTarget: new URL(`${base}/notes/1`) })));
      const stored = await a.services.db.sql.query<{ uri: string }>(`select uri from statuses where uri like $1 order by id`, [`${base}/notes/%`]);
      // Ancestors 1..depth are stored (each threaded to the next), then the chain is cut.
      expect(stored.map((s) => s.uri).sort()).toEqual(Array.from({ length: REMOTE_FETCH_LIMITS.depth }, (_, i) => `${base}/notes/${i + 1}`).sort());
      // One fetch per ancestor, one for their author.
      expect(requests).toBe(REMOTE_FETCH_LIMITS.depth + 1);
      const r = (await row(a, reply))!;
      const parent = (await row(a, `${base}/notes/1`))!;
      expect(r.in_reply_to_id).toBe(parent.id);
      expect((await row(a, `${base}/notes/${REMOTE_FETCH_LIMITS.depth}`))!.in_reply_to_id).toBeNull();
    } finally {
      await new Promise((r) => peer.close(r));
    }
  });
});
