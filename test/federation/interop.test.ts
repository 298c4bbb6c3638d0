/**
 * Interoperability: what Mastodon, GoToSocial, Misskey, Pleroma/Akkoma and Hollo actually send
 * (test/fixtures/activitypub/<software>/, written from each project's serializers), delivered to
 * a real Roost's real inbox over HTTP with real signatures by a fake server acting as that
 * software (test/helpers/fake-software.ts), and what each yields: rows and API output.
 *
 * Conventions every software's fixtures follow, so one set of assertions fits all: the Create
 * mentions the local account (alice), tags #interop, uses the custom emoji :blobcat: and carries
 * one image; the edit says "edited"; the vote chooses "Yes" on alice's poll; Like, Announce (and
 * the emoji reaction, where the software has one) name alice's public status. Every delivery is
 * answered 202, never 500.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';
import { fixtureNames, SOFTWARES, type Placeholders } from '../fixtures/activitypub/load.ts';

let roost: TestRoost;
let alice: TestUser;
let localNote: { id: string; uri: string };
let localPoll: { id: string; uri: string; poll: { id: string } };

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  const n = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'A public post to like and boost' } });
  expect(n.status).toBe(200);
  localNote = n.body;
  const p = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Yes or no?', poll: { options: ['Yes', 'No'], expires_in: 86_400 } } });
  expect(p.status).toBe(200);
  localPoll = p.body;
}, 120_000);
afterAll(async () => {
  await roost?.close();
});

const one = async <T>(sql: string, params: unknown[]): Promise<T | undefined> => (await roost.services.db.sql.query<T>(sql, params))[0];
const accountId = (uri: string) => one<{ id: string }>(`select id::text from accounts where uri = $1`, [uri]).then((r) => r?.id ?? null);
const statusId = (uri: string) => one<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]).then((r) => r?.id ?? null);
async function counts() {
  const [r] = await roost.services.db.sql.query<Record<string, number>>(
    `select (select count(*)::int from statuses) as statuses, (select count(*)::int from follows) as follows,
            (select count(*)::int from favourites) as favourites, (select count(*)::int from blocks) as blocks,
            (select count(*)::int from accounts) as accounts, (select count(*)::int from mentions) as mentions`,
    [],
  );
  return r!;
}
function objectOf(activity: Record<string, unknown>): Record<string, unknown> {
  return activity.object as Record<string, unknown>;
}

const AS = 'https://www.w3.org/ns/activitystreams#';
/** A Create's Note (its id and first attachment), compacted or expanded JSON-LD (full IRIs, no @context). */
function noteOf(fixture: unknown): { id: string; attachmentUrl: string; attachmentName: string | null; quote: string | null; emojiUrl: string | null } {
  if ('@id' in (fixture as object)) {
    const note = (fixture as Record<string, any>)[`${AS}object`][0];
    const a = note[`${AS}attachment`][0];
    const emoji = (note[`${AS}tag`] ?? []).find((t: Record<string, any>) => [].concat(t['@type']).some((x: string) => x.endsWith('#Emoji')));
    const icon = emoji?.[`${AS}icon`]?.[0]?.[`${AS}url`]?.[0];
    return { id: note['@id'], attachmentUrl: a[`${AS}url`][0]['@id'], attachmentName: a[`${AS}name`]?.[0]['@value'] ?? null, quote: null, emojiUrl: icon?.['@id'] ?? null };
  }
  const note = objectOf(fixture as Record<string, unknown>);
  const a = (Array.isArray(note.attachment) ? note.attachment[0] : note.attachment) as { url: string | { href: string }; name?: string | null };
  // Pleroma gives an attachment's url as a list of Links.
  const url = Array.isArray(a.url) ? (a.url[0] as { href: string }).href : typeof a.url === 'string' ? a.url : a.url.href;
  const quote = (note.quoteUrl ?? note._misskey_quote ?? note.quoteUri ?? null) as string | null;
  const emoji = ([] as { type?: string; icon?: { url?: string } }[]).concat((note.tag ?? []) as never).find((t) => t.type === 'Emoji');
  return { id: note.id as string, attachmentUrl: url, attachmentName: a.name ?? null, quote, emojiUrl: emoji?.icon?.url ?? null };
}

describe.each(SOFTWARES)('%s', (software) => {
  let fake: FakeSoftware;
  let values: Placeholders;
  let actorUri: string;
  const has = (name: string) => fixtureNames(software).includes(name);
  const deliver = async (name: string, extra: Placeholders = {}) => {
    const res = await fake.deliver(`${roost.url}/users/alice/inbox`, name, { ...values, ...extra });
    expect(res.status, `${software}/${name}.json: ${await res.clone().text()}`).toBe(202);
    return res;
  };

  beforeAll(async () => {
    fake = await startFakeSoftware(software);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    values = {
      local: roost.url,
      local_host: new URL(roost.url).host,
      local_actor: roost.at('/users/alice'),
      local_actor_id: alice.account.id,
      local_note: localNote.uri,
      local_poll: localPoll.uri,
      now: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      later: later.replace(/\.\d+Z$/, 'Z'),
    };
    actorUri = fake.fixture('actor', values).id as string;
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('Follow: the remote account follows alice, its actor document stored with its extensions', async () => {
    await deliver('follow');
    const remoteId = await eventually(() => accountId(actorUri), 20_000, 'the remote account');
    await eventually(
      async () => (await one(`select 1 as x from follows where account_id = $1 and target_account_id = $2 and state = 'accepted'`, [remoteId, alice.account.id])) !== undefined,
      20_000,
      'the follow',
    );
    expect((await relationshipOf(alice, remoteId)).followed_by).toBe(true);
    const actor = fake.fixture('actor', values);
    const r = await alice.api(`/api/v1/accounts/${remoteId}`);
    expect(r.status).toBe(200);
    expect(r.body.username).toBe(actor.preferredUsername);
    expect(r.body.acct).toBe(`${actor.preferredUsername}@${new URL(fake.base).host}`);
    expect(r.body.locked).toBe(false);
    expect(r.body.display_name).toBe(actor.name);
    expect(r.body.discoverable).toBe(actor.discoverable);
    expect(r.body.fields.map((f: { name: string }) => f.name)).toEqual((actor.attachment as { name: string }[]).map((a) => a.name));
    // Roost answers the Follow with an Accept to the remote inbox.
    await eventually(async () => fake.posts.some((p) => p.body.type === 'Accept'), 20_000, 'the Accept');
  });

  it('Accept: alice follows the remote account and its Accept settles it', async () => {
    const remoteId = (await accountId(actorUri))!;
    const r = await alice.api(`/api/v1/accounts/${remoteId}/follow`, { method: 'POST' });
    expect(r.status).toBe(200);
    const follow = await eventually(async () => fake.posts.find((p) => p.body.type === 'Follow' && p.body.object === actorUri), 20_000, 'the Follow');
    expect((await relationshipOf(alice, remoteId)).requested).toBe(true);
    await deliver('accept', { local_follow: follow.body.id as string });
    await eventually(async () => (await relationshipOf(alice, remoteId)).following === true, 20_000, 'following');
  });

  const checkNote = async (name: string) => {
    const note = noteOf(fake.fixture(name, values));
    const id = await eventually(() => statusId(note.id as string), 20_000, `the status of ${name}`);
    const r = await alice.api(`/api/v1/statuses/${id}`);
    expect(r.status).toBe(200);
    expect(r.body.account.acct).toBe(`${fake.fixture('actor', values).preferredUsername}@${new URL(fake.base).host}`);
    expect(r.body.visibility).toBe('public');
    expect(r.body.mentions.map((m: { acct: string }) => m.acct)).toEqual(['alice']);
    expect(r.body.tags.map((t: { name: string }) => t.name)).toEqual(['interop']);
    // The Emoji tag is kept as that server's copy of :blobcat:, shown at its URL.
    expect(r.body.content).toContain(':blobcat:');
    expect(note.emojiUrl).toMatch(/^http/);
    expect(r.body.emojis).toEqual([expect.objectContaining({ shortcode: 'blobcat', url: note.emojiUrl })]);
    expect(r.body.media_attachments).toHaveLength(1);
    expect(r.body.media_attachments[0].type).toBe('image');
    expect(r.body.media_attachments[0].remote_url).toBe(note.attachmentUrl);
    expect(r.body.media_attachments[0].description).toBe(note.attachmentName);
    // A quote (Roost has none) stays one link to the quoted post, "RE: <url>", whether the
    // software wrote it into its content (Misskey, Hollo) or not (Pleroma).
    if (note.quote) {
      expect(r.body.content.split(`href="${note.quote}"`)).toHaveLength(2);
      expect(r.body.content).toContain('RE: ');
    }
    return r.body;
  };

  it('Create(Note) with a mention, a hashtag, a custom emoji and an image', async () => {
    await deliver('create-note');
    const status = await checkNote('create-note');
    const [mention] = await roost.services.db.sql.query<{ silent: boolean }>(`select silent from mentions where status_id = $1 and account_id = $2`, [status.id, alice.account.id]);
    expect(mention).toEqual({ silent: false });
  });

  if (has('create-note-expanded')) it('Create(Note) in expanded (non-compacted) JSON-LD yields the same status', async () => {
    await deliver('create-note-expanded');
    await checkNote('create-note-expanded');
  });

  if (has('create-note-expanded')) it('the same as jsonld.js writes it, a top-level array: refused with 400, nothing written', async () => {
    // Fedify copies the document into an object (to detach a Linked Data signature) and then finds
    // no actor; the body cannot be unwrapped before it without breaking its signed Digest.
    const before = await counts();
    const text = `[${JSON.stringify(fake.fixture('create-note-expanded', values)).replace('113000000000000003', '113000000000000004')}]`;
    const res = await fake.deliverText(`${roost.url}/users/alice/inbox`, text);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Invalid activity' });
    await settled(roost);
    expect(await counts()).toEqual(before);
  });

  it('Create(Question): a status with its poll', async () => {
    await deliver('question');
    const q = objectOf(fake.fixture('question', values));
    const id = await eventually(() => statusId(q.id as string), 20_000, 'the question');
    const r = await alice.api(`/api/v1/statuses/${id}`);
    const options = (q.oneOf ?? q.anyOf) as { name: string; replies?: { totalItems?: number } }[];
    expect(r.body.poll.multiple).toBe(q.anyOf !== undefined);
    expect(r.body.poll.options).toEqual(options.map((o) => ({ title: o.name, votes_count: o.replies?.totalItems ?? 0 })));
    expect(new Date(r.body.poll.expires_at).toISOString()).toBe(new Date((q.endTime ?? q.closed) as string).toISOString());
  });

  if (has('vote')) it('a vote on alice\'s poll is counted', async () => {
    const before = (await alice.api(`/api/v1/polls/${localPoll.poll.id}`)).body;
    await deliver('vote');
    const remoteId = (await accountId(actorUri))!;
    await eventually(
      async () => (await one(`select 1 as x from poll_votes where poll_id = $1 and account_id = $2 and choices = '{0}'`, [localPoll.poll.id, remoteId])) !== undefined,
      20_000,
      'the vote',
    );
    const r = await alice.api(`/api/v1/polls/${localPoll.poll.id}`);
    expect(r.body.options).toEqual([{ title: 'Yes', votes_count: before.options[0].votes_count + 1 }, { title: 'No', votes_count: 0 }]);
    expect(r.body.voters_count).toBe(before.voters_count + 1);
    // A vote is never a status.
    expect(await statusId(objectOf(fake.fixture('vote', values)).id as string)).toBeNull();
  });

  if (has('update-note')) it('Update(Note): the status is edited', async () => {
    await deliver('update-note');
    const note = objectOf(fake.fixture('update-note', values));
    const id = (await statusId(note.id as string))!;
    const r = await eventually(async () => {
      const s = await alice.api(`/api/v1/statuses/${id}`);
      return s.body.edited_at ? s : null;
    }, 20_000, 'the edit');
    expect(r.body.content).toContain('edited');
    expect(r.body.mentions.map((m: { acct: string }) => m.acct)).toEqual(['alice']);
  });

  if (has('update-actor')) it('Update(Person): the profile is refreshed', async () => {
    await deliver('update-actor');
    const name = objectOf(fake.fixture('update-actor', values)).name as string;
    const remoteId = (await accountId(actorUri))!;
    await eventually(async () => (await alice.api(`/api/v1/accounts/${remoteId}`)).body.display_name === name, 20_000, 'the new display name');
  });

  const favourites = async () => (await alice.api(`/api/v1/statuses/${localNote.id}`)).body.favourites_count as number;
  const reblogs = async () => (await alice.api(`/api/v1/statuses/${localNote.id}`)).body.reblogs_count as number;

  it('Like: a favourite of alice\'s status', async () => {
    const before = await favourites();
    await deliver('like');
    const remoteId = (await accountId(actorUri))!;
    await eventually(async () => (await one(`select 1 as x from favourites where account_id = $1 and status_id = $2`, [remoteId, localNote.id])) !== undefined, 20_000, 'the favourite');
    expect(await favourites()).toBe(before + 1);
  });

  if (has('emoji-react')) it('EmojiReact: ignored as Mastodon does (no favourite, nothing written)', async () => {
    const before = await counts();
    const favouritesBefore = await favourites();
    await deliver('emoji-react');
    await settled(roost);
    expect(await counts()).toEqual(before);
    expect(await favourites()).toBe(favouritesBefore);
  });

  it('Announce: a reblog of alice\'s status', async () => {
    const before = await reblogs();
    await deliver('announce');
    const announce = fake.fixture('announce', values);
    await eventually(() => one(`select 1 as x from statuses where uri = $1 and reblog_of_id = $2`, [announce.id, localNote.id]), 20_000, 'the reblog');
    expect(await reblogs()).toBe(before + 1);
  });

  it('Delete: the status is gone', async () => {
    const note = objectOf(fake.fixture('create-note', values));
    const id = (await statusId(note.id as string))!;
    await deliver('delete');
    await eventually(async () => (await alice.api(`/api/v1/statuses/${id}`)).status === 404, 20_000, 'the deletion');
  });

  it('Flag: a report about alice citing her status, filed by the sender; delivered again, no second one', async () => {
    const before = await counts();
    const flag = fake.fixture('flag', values);
    const sender = flag.actor as string;
    await deliver('flag');
    const report = await eventually(
      () => one<{ id: string; account_id: string; status_ids: string[]; comment: string; category: string; uri: string | null }>(
        `select r.id::text, r.account_id::text, r.status_ids::text[], r.comment, r.category, r.uri from reports r join accounts a on a.id = r.account_id
          where a.uri = $1 and r.target_account_id = $2`,
        [sender, alice.account.id],
      ),
      20_000,
      'the report',
    );
    expect(report).toEqual({ id: report.id, account_id: (await accountId(sender))!, status_ids: [localNote.id], comment: flag.content, category: 'other', uri: flag.id });
    await deliver('flag');
    await settled(roost);
    const [n] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from reports where uri = $1`, [flag.id]);
    expect(n!.n).toBe(1);
    // Nothing else written (the sender's account aside, when the Flag came from an actor not seen before).
    const after = await counts();
    expect({ ...after, accounts: before.accounts }).toEqual(before);
  });

  it('Move: alice\'s follow moves to the new account', async () => {
    const originId = (await accountId(actorUri))!;
    await deliver('move');
    const target = fake.fixture('move', values).target as string;
    const targetId = await eventually(() => accountId(target), 20_000, 'the move target');
    await eventually(async () => (await one(`select 1 as x from follows where account_id = $1 and target_account_id = $2`, [alice.account.id, targetId])) !== undefined, 20_000, 'the moved follow');
    expect((await one<{ moved: string }>(`select moved_to_account_id::text as moved from accounts where id = $1`, [originId]))?.moved).toBe(targetId);
    await eventually(async () => fake.posts.some((p) => p.body.type === 'Follow' && p.body.object === target), 20_000, 'the Follow to the new account');
  });

  it('Block: alice is blocked, the remaining follow ends', async () => {
    const remoteId = (await accountId(actorUri))!;
    await deliver('block');
    await eventually(async () => (await relationshipOf(alice, remoteId)).blocked_by === true, 20_000, 'the block');
    const rel = await relationshipOf(alice, remoteId);
    expect(rel.followed_by).toBe(false);
    expect(rel.following).toBe(false);
  });
});
