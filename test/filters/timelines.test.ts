/**
 * Filters on reads through the real server: `hide` removes a status from the home, list, public
 * and hashtag timelines, an account's statuses and a thread (each in its context), `warn` fills
 * Status#filtered with the FilterResult; a reblog is matched on the status it reblogs; the
 * viewer's own statuses and signed-out readers are untouched; a page with filters present still
 * costs a fixed number of statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let listId: string;
let hideId: string;
let warnId: string;
const posts: Record<string, string> = {};

interface S {
  id: string;
  content: string;
  filtered: { filter: { id: string; title: string; filter_action: string }; keyword_matches: string[] | null; status_matches: string[] | null }[];
  reblog: S | null;
}

async function post(user: TestUser, key: string, body: Record<string, unknown>) {
  const res = await user.api('/api/v1/statuses', { method: 'POST', body });
  expect(res.status).toBe(200);
  posts[key] = res.body.id;
  return res.body;
}

const keyOf = (id: string) => Object.entries(posts).find(([, v]) => v === id)?.[0] ?? id;

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  expect((await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  const list = await alice.api('/api/v1/lists', { method: 'POST', body: { title: 'Bob' } });
  listId = list.body.id;
  expect((await alice.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [bob.account.id] } })).status).toBe(200);

  const hide = await alice.api('/api/v2/filters', {
    method: 'POST',
    body: { title: 'No villains', context: ['home', 'public'], filter_action: 'hide', keywords_attributes: [{ keyword: 'villain', whole_word: true }] },
  });
  hideId = hide.body.id;
  const warn = await alice.api('/api/v2/filters', {
    method: 'POST',
    body: { title: 'Plot', context: ['home', 'public', 'thread'], filter_action: 'warn', keywords_attributes: [{ keyword: '#plot', whole_word: true }, { keyword: 'twist', whole_word: true }] },
  });
  warnId = warn.body.id;
  // Thread and profile: a hide filter of their own.
  await alice.api('/api/v2/filters', {
    method: 'POST',
    body: { title: 'Endings', context: ['thread', 'account'], filter_action: 'hide', keywords_attributes: [{ keyword: 'the end', whole_word: true }] },
  });

  await post(bob, 'calm', { status: 'A calm day #story #plotting' });
  await post(bob, 'villain', { status: 'The villain wins #story' });
  await post(bob, 'villains', { status: 'Villains (plural) do not match a whole word #story' });
  const twist = await post(bob, 'twist', { status: 'A #plot twist #story' });
  await post(bob, 'end', { status: 'This is the end.', in_reply_to_id: twist.id });
  await post(bob, 'afterEnd', { status: 'and after it', in_reply_to_id: posts.end });
  await post(bob, 'cw', { status: 'behind a warning', spoiler_text: 'villain inside' });
  await post(bob, 'poll', { status: 'Which one?', poll: { options: ['hero', 'villain'], expires_in: 3600 } });
  // Reblogs are matched on the status they reblog.
  const carolVillain = await post(carol, 'carolVillain', { status: 'My villain origin story' });
  const carolPlot = await post(carol, 'carolPlot', { status: 'the #plot thickens' });
  posts.reblogVillain = (await bob.api(`/api/v1/statuses/${carolVillain.id}/reblog`, { method: 'POST' })).body.id;
  posts.reblogPlot = (await bob.api(`/api/v1/statuses/${carolPlot.id}/reblog`, { method: 'POST' })).body.id;
  await post(alice, 'own', { status: 'my own villain story' });
  await settled(roost);
}, 120_000);
afterAll(async () => roost?.close());

const PLOT = (matches: string[]) => ({
  filter: { id: warnId, title: 'Plot', context: ['home', 'public', 'thread'], expires_at: null, filter_action: 'warn' },
  keyword_matches: matches,
  status_matches: null,
});

async function timeline(path: string, user: TestUser | null = alice): Promise<S[]> {
  const res = user ? await user.api(path) : await fetch(roost.at(path)).then(async (r) => ({ status: r.status, body: await r.json() }));
  expect(res.status).toBe(200);
  return res.body as S[];
}

const keys = (page: S[]) => page.map((s) => keyOf(s.id));

describe('hide and warn on timelines', () => {
  it('home: hidden ones gone, warned ones carry the FilterResult, own statuses untouched', async () => {
    const page = await timeline('/api/v1/timelines/home?limit=40');
    expect(keys(page)).toEqual(['own', 'reblogPlot', 'afterEnd', 'end', 'twist', 'villains', 'calm']);
    const byKey = Object.fromEntries(page.map((s) => [keyOf(s.id), s]));
    expect(byKey.twist.filtered).toEqual([PLOT(['#plot', 'twist'])]);
    expect(byKey.calm.filtered).toEqual([]); // #plotting is not #plot
    expect(byKey.villains.filtered).toEqual([]);
    expect(byKey.own.filtered).toEqual([]);
    // The reblog and the status it carries both show the result.
    expect(byKey.reblogPlot.filtered).toEqual([PLOT(['#plot'])]);
    expect(byKey.reblogPlot.reblog!.filtered).toEqual([PLOT(['#plot'])]);
  });

  it('the content warning and the poll options are matched too', async () => {
    const page = keys(await timeline('/api/v1/timelines/home?limit=40'));
    expect(page).not.toContain('cw'); // "villain inside" is its content warning
    expect(page).not.toContain('poll'); // "villain" is one of its options
  });

  it('list timeline: the home context', async () => {
    const page = await timeline(`/api/v1/timelines/list/${listId}?limit=40`);
    expect(keys(page)).not.toContain('villain');
    expect(page.find((s) => s.id === posts.twist)!.filtered).toEqual([PLOT(['#plot', 'twist'])]);
  });

  it('public and hashtag timelines: the public context; signed out, nothing is filtered', async () => {
    const pub = await timeline('/api/v1/timelines/public?limit=40');
    expect(keys(pub)).not.toContain('villain');
    expect(keys(pub)).not.toContain('carolVillain');
    expect(keys(pub)).toContain('own');
    expect(pub.find((s) => s.id === posts.carolPlot)!.filtered).toEqual([PLOT(['#plot'])]);
    const tag = await timeline('/api/v1/timelines/tag/story?limit=40');
    expect(keys(tag)).toEqual(['twist', 'villains', 'calm']);
    expect(tag[0].filtered).toEqual([PLOT(['#plot', 'twist'])]);
    const anonymous = await timeline('/api/v1/timelines/tag/story?limit=40', null);
    expect(keys(anonymous)).toEqual(['twist', 'villains', 'villain', 'calm']);
    expect(anonymous.every((s) => s.filtered === undefined)).toBe(true);
  });

  it("an account's statuses (account) and a thread (thread) use their own contexts", async () => {
    const profile = await timeline(`/api/v1/accounts/${bob.account.id}/statuses?limit=40`);
    // Home and public filters do not apply here; "the end" (account context) does.
    expect(keys(profile)).toContain('villain');
    expect(keys(profile)).not.toContain('end');
    expect(profile.find((s) => s.id === posts.twist)!.filtered).toEqual([]);
    const ctx = await alice.api(`/api/v1/statuses/${posts.end}/context`);
    expect(ctx.status).toBe(200);
    expect(keys(ctx.body.ancestors)).toEqual(['twist']);
    expect(ctx.body.ancestors[0].filtered).toEqual([PLOT(['#plot', 'twist'])]);
    expect(keys(ctx.body.descendants)).toEqual(['afterEnd']);
    const fromTop = await alice.api(`/api/v1/statuses/${posts.twist}/context`);
    expect(keys(fromTop.body.descendants)).toEqual(['afterEnd']);
  });

  it('a status filter hides that status by id, or warns with status_matches', async () => {
    const f = (await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'This one', context: ['public'], filter_action: 'hide' } })).body;
    await alice.api(`/api/v2/filters/${f.id}/statuses`, { method: 'POST', body: { status_id: posts.calm } });
    expect(keys(await timeline('/api/v1/timelines/public?limit=40'))).not.toContain('calm');
    await alice.api(`/api/v2/filters/${f.id}`, { method: 'PUT', body: { filter_action: 'warn' } });
    const warned = (await timeline('/api/v1/timelines/public?limit=40')).find((s) => s.id === posts.calm)!;
    expect(warned.filtered).toEqual([
      { filter: { id: f.id, title: 'This one', context: ['public'], expires_at: null, filter_action: 'warn' }, keyword_matches: null, status_matches: [posts.calm] },
    ]);
    await alice.api(`/api/v2/filters/${f.id}`, { method: 'DELETE' });
  });

  it('turning the hide filter off brings the statuses back', async () => {
    await alice.api(`/api/v2/filters/${hideId}`, { method: 'PUT', body: { context: ['notifications'] } });
    try {
      expect(keys(await timeline('/api/v1/timelines/home?limit=40'))).toEqual(
        expect.arrayContaining(['villain', 'cw', 'poll', 'reblogVillain']),
      );
    } finally {
      await alice.api(`/api/v2/filters/${hideId}`, { method: 'PUT', body: { context: ['home', 'public'] } });
    }
  });
});

describe('statuses asked for by id (GET /api/v1/statuses/:id and ?id[]=)', () => {
  const VILLAINS = { filter: { id: '', title: 'No villains', context: ['home', 'public'], expires_at: null, filter_action: 'hide' }, keyword_matches: ['villain'], status_matches: null };
  const ENDINGS = (id: string) => ({ filter: { id, title: 'Endings', context: ['thread', 'account'], expires_at: null, filter_action: 'hide' }, keyword_matches: ['the end'], status_matches: null });

  it('fill `filtered` with every matching filter of the viewer, whatever its context, and hide nothing (Mastodon)', async () => {
    const endings = (await alice.api('/api/v2/filters')).body.find((f: { title: string }) => f.title === 'Endings').id;
    const villains = { ...VILLAINS, filter: { ...VILLAINS.filter, id: hideId } };
    const one = await alice.api(`/api/v1/statuses/${posts.twist}`);
    expect([one.status, one.body.filtered]).toEqual([200, [PLOT(['#plot', 'twist'])]]);
    const hidden = await alice.api(`/api/v1/statuses/${posts.villain}`);
    expect([hidden.status, hidden.body.filtered]).toEqual([200, [villains]]);
    expect((await alice.api(`/api/v1/statuses/${posts.end}`)).body.filtered).toEqual([ENDINGS(endings)]);
    // A reblog and the status it carries show the results of the status reblogged.
    const reblog = (await alice.api(`/api/v1/statuses/${posts.reblogVillain}`)).body;
    expect([reblog.filtered, reblog.reblog.filtered]).toEqual([[villains], [villains]]);
    expect((await alice.api(`/api/v1/statuses/${posts.calm}`)).body.filtered).toEqual([]);
    expect((await alice.api(`/api/v1/statuses/${posts.own}`)).body.filtered).toEqual([]);
    const ids = ['twist', 'villain', 'calm', 'end'].map((k) => posts[k]);
    const many = await alice.api(`/api/v1/statuses?${ids.map((id) => `id[]=${id}`).join('&')}`);
    expect(many.body.map((s: S) => [keyOf(s.id), s.filtered])).toEqual([
      ['twist', [PLOT(['#plot', 'twist'])]], ['villain', [villains]], ['calm', []], ['end', [ENDINGS(endings)]],
    ]);
    // Others, and signed out, see no results.
    expect('filtered' in (await fetch(roost.at(`/api/v1/statuses/${posts.villain}`)).then((r) => r.json() as Promise<object>))).toBe(false);
    expect((await carol.api(`/api/v1/statuses/${posts.villain}`)).body.filtered).toEqual([]);
  });

  it('cost a fixed number of statements, with filters or without', async () => {
    const two = ['twist', 'villain'].map((k) => `id[]=${posts[k]}`).join('&');
    const ten = ['twist', 'villain', 'calm', 'end', 'afterEnd', 'cw', 'poll', 'reblogVillain', 'reblogPlot', 'villains'].map((k) => `id[]=${posts[k]}`).join('&');
    await alice.api(`/api/v1/statuses?${two}`);
    const q2 = await capturedStatements(roost, () => alice.api(`/api/v1/statuses?${two}`));
    const q10 = await capturedStatements(roost, () => alice.api(`/api/v1/statuses?${ten}`));
    const qOne = await capturedStatements(roost, () => alice.api(`/api/v1/statuses/${posts.villain}`));
    const qNoFilters = await capturedStatements(roost, () => carol.api(`/api/v1/statuses?${ten}`));
    expect(q10).toEqual(q2);
    expect(qOne.length).toBe(q2.length);
    expect(qNoFilters.length).toBe(q2.length);
  });
});

describe('a page with filters present costs a fixed number of statements', () => {
  it('home, public and hashtag: 2 and 10 alike', async () => {
    for (let i = 0; i < 12; i++) await post(bob, `bulk${i}`, { status: i % 3 === 0 ? `villain ${i} #bulk` : i % 3 === 1 ? `#plot ${i} #bulk` : `fine ${i} #bulk` });
    await settled(roost);
    for (const path of ['/api/v1/timelines/home', '/api/v1/timelines/public', '/api/v1/timelines/tag/bulk']) {
      await alice.api(`${path}?limit=1`);
      let two: S[] = [];
      let ten: S[] = [];
      const q2 = await capturedStatements(roost, async () => (two = (await alice.api(`${path}?limit=2`)).body));
      const q10 = await capturedStatements(roost, async () => (ten = (await alice.api(`${path}?limit=10`)).body));
      expect(q10).toEqual(q2);
      // The page of ids, the statuses (with mentions, tags, flags, media, polls and the viewer's filters), authors.
      expect(q2.length).toBe(3);
      // Of the 10 bulk statuses read (newest first: 11…2), the villain ones (9, 6, 3) are gone.
      expect(ten.length).toBe(7);
      expect(ten.filter((s) => s.filtered.length > 0).length).toBe(3);
      expect(two.length).toBeLessThanOrEqual(2);
    }
  });
});
