/**
 * GET /api/v2/search on one instance, through the real server: who finds which statuses (their
 * own, mentions, favourites, bookmarks, indexable accounts' public posts; never a followers-only
 * post they may not see, nor a blocked account's), each of Mastodon's operators, accounts and
 * hashtags, Mastodon's errors for bad input, and a fixed number of statements per page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { parseSearch } from '../../src/lib/search-query.ts';

let r: TestRoost;
let alice: TestUser; // the searcher
let bob: TestUser; // indexable
let carol: TestUser; // not indexable
let dave: TestUser; // indexable, posts for followers only
let eve: TestUser; // indexable, blocked by alice
const ids: Record<string, string> = {};

async function post(u: TestUser, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await u.api('/api/v1/statuses', { body });
  expect(res.status).toBe(200);
  ids[key] = res.body.id;
  return res.body.id;
}

const search = async (u: TestUser | null, q: string, extra = '') => {
  const path = `/api/v2/search?q=${encodeURIComponent(q)}${extra}`;
  return u ? u.api(path) : apiRequest(r, path);
};
const found = async (q: string, extra = '&type=statuses', u: TestUser = alice) => {
  const res = await search(u, q, extra);
  expect(res.status).toBe(200);
  return (res.body.statuses as { id: string }[]).map((s) => s.id);
};

beforeAll(async () => {
  r = await startTestRoost();
  [alice, bob, carol, dave, eve] = await Promise.all(['alice', 'bob', 'carol', 'dave', 'eve'].map((n) => createTestUser(r, n)));
  for (const u of [bob, dave, eve]) {
    expect((await u.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { indexable: true, discoverable: true } })).status).toBe(200);
  }
  await post(bob, 'bobPublic', { status: 'The kestrel hovers over the meadow', language: 'en' });
  await post(bob, 'bobOld', { status: 'An old kestrel story from the archive', language: 'en' });
  await post(bob, 'bobUnlisted', { status: 'Unlisted kestrel sighting', visibility: 'unlisted', language: 'en' });
  await post(bob, 'bobFrench', { status: 'Le faucon crécerelle kestrel', language: 'fr' });
  await post(bob, 'bobSensitive', { status: 'A sensitive kestrel picture', sensitive: true, spoiler_text: 'birds of prey', language: 'en' });
  await post(bob, 'bobReply', { status: 'A kestrel reply', in_reply_to_id: ids.bobPublic, language: 'en' });
  await post(bob, 'bobPoll', { status: 'Which kestrel is best?', poll: { options: ['common kestrel', 'lesser kestrel'], expires_in: 3600 }, language: 'en' });
  await post(bob, 'bobMedia', { status: 'kestrel with a photo', language: 'en' });
  await post(bob, 'bobLink', { status: 'kestrel facts at https://birds.example/kestrel', language: 'en' });
  await post(bob, 'bobPhrase', { status: 'the kestrel nest is empty', language: 'en' });
  await post(carol, 'carolPublic', { status: 'Carol saw a kestrel too', language: 'en' });
  await post(carol, 'carolMention', { status: `@alice a kestrel for you`, language: 'en' });
  await post(carol, 'carolFavourited', { status: 'kestrel that alice favourites', language: 'en' });
  await post(carol, 'carolBookmarked', { status: 'kestrel that alice bookmarks', language: 'en' });
  await post(dave, 'daveFollowers', { status: 'Secret kestrel nest for followers', visibility: 'private', language: 'en' });
  await post(eve, 'evePublic', { status: 'Eve writes about the kestrel', language: 'en' });
  await post(alice, 'aliceOwn', { status: 'My own private kestrel notes', visibility: 'private', language: 'en' });
  await post(alice, 'aliceDirect', { status: 'A direct kestrel note to myself', visibility: 'direct', language: 'en' });
  expect((await alice.api(`/api/v1/statuses/${ids.carolFavourited}/favourite`, { method: 'POST' })).status).toBe(200);
  expect((await alice.api(`/api/v1/statuses/${ids.carolBookmarked}/bookmark`, { method: 'POST' })).status).toBe(200);
  expect((await alice.api(`/api/v1/accounts/${eve.account.id}/block`, { method: 'POST' })).status).toBe(200);
  // A reblog of a searchable post is never a result itself.
  expect((await carol.api(`/api/v1/statuses/${ids.bobPublic}/reblog`, { method: 'POST' })).status).toBe(200);
  // Media and a link card, as the upload and the card job would leave them.
  const sql = r.services.db.sql;
  await sql.query(
    `insert into media_attachments (id, account_id, status_id, position, type, created_at, updated_at)
     values (1, $1, $2, 0, 'image', now(), now())`,
    [bob.account.id, ids.bobMedia],
  );
  await sql.query(`insert into preview_cards (id, url, title, type, created_at, updated_at) values (1, 'https://birds.example/kestrel', 'Kestrels', 'link', now(), now())`);
  await sql.query(`insert into preview_cards_statuses (status_id, preview_card_id, url) values ($1, 1, 'https://birds.example/kestrel')`, [ids.bobLink]);
  await sql.query(`update statuses set created_at = '2025-06-15T12:00:00Z' where id = $1`, [ids.bobOld]);
});
afterAll(async () => r?.close());

describe('the query parser', () => {
  it('reads words, phrases, negations and operators, quoting every lexeme', () => {
    const p = parseSearch(`Kestrel "nest is" -dogs from:@bob@x.example has:media -is:reply language:FR in:library before:2026-01-02 it's`);
    expect(p.tsquery).toBe(`'kestrel' & ('nest' <-> 'is') & ('it' <-> 's')`);
    expect(p.excluded).toBe(`'dogs'`);
    expect(p.scope).toBe('library');
    expect(p.filters).toEqual([
      { kind: 'from', term: 'bob@x.example', negated: false },
      { kind: 'has', term: 'media', negated: false },
      { kind: 'is', term: 'reply', negated: true },
      { kind: 'language', term: 'fr', negated: false },
      { kind: 'before', term: '2026-01-02', negated: false },
    ]);
    // tsquery syntax typed by the user is just text.
    expect(parseSearch(`a&b | !c <-> d:* '\\`).tsquery).toBe(`('a' <-> 'b') & 'c' & 'd'`);
    expect(parseSearch(`o'neil`).tsquery).toBe(`('o' <-> 'neil')`);
    expect(parseSearch('unknown:thing').tsquery).toBe(`('unknown' <-> 'thing')`);
  });
});

describe('which statuses a searcher finds', () => {
  it('finds their own, mentions, favourites, bookmarks and indexable public posts; never a reblog', async () => {
    const got = await found('kestrel', '&type=statuses&limit=40');
    expect(new Set(got)).toEqual(
      new Set([
        ids.bobPublic, ids.bobOld, ids.bobFrench, ids.bobSensitive, ids.bobReply, ids.bobPoll, ids.bobMedia, ids.bobLink, ids.bobPhrase,
        ids.carolMention, ids.carolFavourited, ids.carolBookmarked, ids.aliceOwn, ids.aliceDirect,
      ]),
    );
    // Not: bob's unlisted post, carol's public post (carol is not indexable), dave's followers-only
    // post, the post of eve (blocked).
    for (const k of ['bobUnlisted', 'carolPublic', 'daveFollowers', 'evePublic']) expect(got).not.toContain(ids[k]);
  });

  it('never finds a followers-only post for someone who may not see it, but does for its author', async () => {
    expect(await found('secret')).toEqual([]);
    expect(await found('secret', '&type=statuses', carol)).toEqual([]);
    expect(await found('secret', '&type=statuses', dave)).toEqual([ids.daveFollowers]);
    // A follower may see it, but it is not in their library nor public: not found either (as Mastodon).
    expect((await carol.api(`/api/v1/accounts/${dave.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    expect(await found('secret', '&type=statuses', carol)).toEqual([]);
    expect(await found('private kestrel notes', '&type=statuses', bob)).toEqual([]);
  });

  it('leaves out the accounts the searcher mutes, and those blocking the searcher', async () => {
    const gil = await createTestUser(r, 'gil');
    await gil.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { indexable: true } });
    const osprey = await post(gil, 'osprey', { status: 'An osprey dives' });
    expect(await found('osprey')).toEqual([osprey]);
    await alice.api(`/api/v1/accounts/${gil.account.id}/mute`, { method: 'POST' });
    expect(await found('osprey')).toEqual([]);
    await alice.api(`/api/v1/accounts/${gil.account.id}/unmute`, { method: 'POST' });
    expect(await found('osprey')).toEqual([osprey]);
    await gil.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' });
    expect(await found('osprey')).toEqual([]);
    // The author finds their own post whoever they block.
    expect(await found('osprey', '&type=statuses', gil)).toEqual([osprey]);
  });

  it('does not search statuses for an anonymous caller', async () => {
    const res = await search(null, 'kestrel');
    expect(res.status).toBe(200);
    expect(res.body.statuses).toEqual([]);
  });

  it('ranks by the words weighed by age: more matches first, an old post below a new one', async () => {
    const finn = await createTestUser(r, 'finn');
    await finn.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { indexable: true } });
    const single = await post(finn, 'merlinSingle', { status: 'a merlin' });
    const triple = await post(finn, 'merlinTriple', { status: 'merlin merlin merlin falcon' });
    const old = await post(finn, 'merlinOld', { status: 'merlin merlin merlin' });
    await r.services.db.sql.query(`update statuses set created_at = created_at - interval '200 days' where id = $1`, [old]);
    expect(await found('merlin')).toEqual([triple, single, old]);
  });
});

describe('operators', () => {
  const cases: [string, string[]][] = [
    ['kestrel from:bob has:media', ['bobMedia']],
    ['kestrel has:image', ['bobMedia']],
    ['kestrel has:video', []],
    ['kestrel has:poll', ['bobPoll']],
    ['kestrel has:link', ['bobLink']],
    ['kestrel has:embed', []],
    ['kestrel from:bob is:reply', ['bobReply']],
    ['kestrel is:sensitive', ['bobSensitive']],
    ['prey', ['bobSensitive']],
    ['kestrel language:fr', ['bobFrench']],
    ['kestrel from:me', ['aliceOwn', 'aliceDirect']],
    ['kestrel from:carol', ['carolMention', 'carolFavourited', 'carolBookmarked']],
    ['kestrel from:nobody', []],
    ['kestrel in:library -from:me', ['carolMention', 'carolFavourited', 'carolBookmarked']],
    ['kestrel in:public -from:bob', []],
    ['kestrel from:bob before:2026-01-01', ['bobOld']],
    ['kestrel from:bob during:2025-06-15', ['bobOld']],
    ['kestrel from:bob after:2025-06-15 -is:reply -has:media -has:poll -has:link -is:sensitive -language:fr', ['bobPublic', 'bobPhrase']],
    ['"nest is empty"', ['bobPhrase']],
    ['"empty nest"', []],
    ['kestrel from:bob -meadow -story -faucon -sensitive -reply -best -photo -facts', ['bobPhrase']],
    ['from:carol -kestrel', []],
  ];
  for (const [q, keys] of cases) {
    it(q, async () => {
      expect(new Set(await found(q, '&type=statuses&limit=40'))).toEqual(new Set(keys.map((k) => ids[k])));
    });
  }

  it('takes account_id, max_id and min_id', async () => {
    expect(new Set(await found('kestrel', `&type=statuses&limit=40&account_id=${carol.account.id}`))).toEqual(
      new Set([ids.carolMention, ids.carolFavourited, ids.carolBookmarked]),
    );
    const page = await found('kestrel', `&type=statuses&limit=40&max_id=${ids.bobPhrase}&min_id=${ids.bobPoll}`);
    expect(new Set(page)).toEqual(new Set([ids.bobMedia, ids.bobLink]));
  });

  it('pages with offset and limit', async () => {
    const all = await found('kestrel', '&type=statuses&limit=40');
    expect(await found('kestrel', '&type=statuses&limit=3')).toEqual(all.slice(0, 3));
    expect(await found('kestrel', '&type=statuses&limit=3&offset=3')).toEqual(all.slice(3, 6));
  });
});

describe('accounts and hashtags', () => {
  it('finds accounts by prefix, the ones followed first, and tags by prefix with their history', async () => {
    const extra = await Promise.all(['bobcat', 'bobby'].map((n) => createTestUser(r, n)));
    expect((await alice.api(`/api/v1/accounts/${extra[1]!.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    const res = await search(alice, 'bob', '&type=accounts');
    expect(res.body.accounts.map((a: { username: string }) => a.username)).toEqual(['bob', 'bobby', 'bobcat']);
    expect((await search(alice, 'bob', '&type=accounts&following=true')).body.accounts.map((a: { username: string }) => a.username)).toEqual(['bobby']);
    expect((await search(alice, `@bob@${r.config.domain}`, '&type=accounts')).body.accounts[0].username).toBe('bob');
    await bob.api('/api/v1/statuses', { body: { status: 'about #Kestrels and #kestrelwatch' } });
    const tags = await search(alice, '#kestrel');
    expect(tags.body.hashtags.map((t: { name: string }) => t.name)).toEqual(['kestrels', 'kestrelwatch'].map((n) => tags.body.hashtags.find((t: { name: string }) => t.name.toLowerCase() === n)!.name));
    expect(tags.body.hashtags[0].history).toHaveLength(7);
    expect(tags.body.hashtags[0].history[0].uses).toBe('1');
    expect(tags.body.hashtags[0].following).toBe(false);
    expect(tags.body.accounts).toEqual([]);
    // Anonymous: accounts and hashtags, no statuses.
    const anon = await search(null, 'kestrel');
    expect(anon.body.hashtags.length).toBe(2);
  });
});

describe('bad input', () => {
  it('answers Mastodon errors', async () => {
    expect(await search(alice, '')).toMatchObject({ status: 400, body: { error: 'param is missing or the value is empty: q' } });
    expect(await search(alice, '   ')).toMatchObject({ status: 400 });
    expect(await apiRequest(r, '/api/v2/search')).toMatchObject({ status: 400 });
    expect(await search(null, 'kestrel', '&type=accounts&offset=5')).toMatchObject({
      status: 401,
      body: { error: 'Search queries pagination is not supported without authentication' },
    });
    expect(await search(null, 'bob@elsewhere.example', '&resolve=true')).toMatchObject({
      status: 401,
      body: { error: 'Search queries that resolve remote resources are not supported without authentication' },
    });
    expect(await search(alice, 'kestrel before:2026-13-45')).toMatchObject({ status: 422, body: { error: 'Invalid date 2026-13-45' } });
    const noScope = await createTestUser(r, 'noscope', { scopes: ['write'] });
    expect((await search(noScope, 'kestrel')).status).toBe(403);
  });

  it('bounds the limit and copes with odd queries', async () => {
    const huge = await search(alice, 'kestrel', '&type=statuses&limit=100000');
    expect(huge.status).toBe(200);
    expect(huge.body.statuses.length).toBe(14);
    const capped = await search(alice, 'kestrel kestrel', '&type=statuses&limit=1000000000000000000000');
    expect(capped.body.statuses.length).toBeLessThanOrEqual(40);
    for (const q of ["'", '"', '!', '&|!():*', '-', '-kestrel', 'from:', 'has:nothing', 'x'.repeat(1500), '@', '#', 'a b c d e f g h i j k l m n o p q r s t u v w x y z']) {
      const res = await search(alice, q);
      expect(res.status, q).toBe(200);
      expect(Array.isArray(res.body.statuses), q).toBe(true);
    }
    // An unknown type finds nothing, as Mastodon.
    expect(await search(alice, 'kestrel', '&type=bogus')).toMatchObject({ status: 200, body: { accounts: [], statuses: [], hashtags: [] } });
    // A malformed URL to resolve: a plain search, no error.
    for (const q of ['https://', 'https://exa mple.test/x', 'http://[::1', 'https://127.0.0.1:1/nothing']) {
      const res = await search(alice, q, '&resolve=true');
      expect(res.status, q).toBe(200);
      expect(res.body, q).toMatchObject({ accounts: [], statuses: [] });
    }
  });

  it('keeps GET /api/v1/search a 404', async () => {
    expect((await alice.api('/api/v1/search?q=kestrel')).status).toBe(404);
  });
});

describe('cost', () => {
  it('renders a page of statuses with a fixed number of statements', async () => {
    const count = async (limit: number) => (await capturedStatements(r, () => search(alice, 'kestrel', `&type=statuses&limit=${limit}`))).length;
    const one = await count(1);
    expect(await count(14)).toBe(one);
    // The search statement, then the status page's (statuses, accounts).
    expect(one).toBe(3);
    const withFrom = await capturedStatements(r, () => search(alice, 'kestrel from:bob', '&type=statuses&limit=20'));
    expect(withFrom.length).toBe(one + 1);
  });

  it('renders a whole search with a fixed number of statements', async () => {
    const all = async (limit: number) => (await capturedStatements(r, () => search(alice, 'b', `&limit=${limit}`))).length;
    await bob.api('/api/v1/statuses', { body: { status: 'b is for #birds and #bats' } });
    const page = await search(alice, 'b', '&limit=40');
    expect(page.body.accounts.length).toBeGreaterThan(1);
    expect(page.body.hashtags.length).toBe(2);
    expect(page.body.statuses.length).toBeGreaterThan(0);
    expect(await all(1)).toBe(await all(40));
  });
});
