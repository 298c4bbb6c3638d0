/**
 * GET /api/v1/timelines/public and /api/v1/timelines/tag/:hashtag through the real server:
 * exactly which statuses (public, not reblogs, replies only to oneself on the public feed, none
 * from silenced or suspended accounts), local / remote, signed out and signed in (the viewer's
 * blocks, mutes and domain blocks), tag names in any case with any[] / all[] / none[].
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let viewer: TestUser;
let ann: TestUser;
let ben: TestUser;
let sid: TestUser; // silenced
let mo: TestUser; // muted by the viewer
const s: Record<string, string> = {};

async function post(u: TestUser, key: string, body: Record<string, unknown>): Promise<void> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  s[key] = r.body.id;
}

beforeAll(async () => {
  roost = await startTestRoost();
  viewer = await createTestUser(roost, 'viewer');
  ann = await createTestUser(roost, 'ann');
  ben = await createTestUser(roost, 'ben');
  sid = await createTestUser(roost, 'sid');
  mo = await createTestUser(roost, 'mo');
  const sql = roost.services.db.sql;
  const now = new Date();
  // A remote account and its public statuses (the inbox is another branch's: its rows stand in here).
  const remote = roost.services.ids.next();
  await sql.query(
    `insert into accounts (id, username, domain, uri, url, inbox_url, created_at, updated_at)
     values ($1, 'rex', 'far.example', 'https://far.example/users/rex', 'https://far.example/@rex', 'https://far.example/users/rex/inbox', $2, $2)`,
    [remote, now],
  );
  const remoteStatus = async (key: string, content: string, tags: string[] = []) => {
    const id = roost.services.ids.next();
    await sql.query(
      `insert into statuses (id, account_id, uri, url, content, visibility, local, created_at, updated_at)
       values ($1, $2, $3, $3, $4, 'public', false, $5, $5)`,
      [id, remote, `https://far.example/users/rex/statuses/${id}`, content, now],
    );
    for (const name of tags) {
      await sql.query(`insert into tags (id, name, created_at) values ($1, $2, $3) on conflict (lower(name)) do nothing`, [roost.services.ids.next(), name, now]);
      await sql.query(`insert into statuses_tags (status_id, tag_id) select $1, id from tags where lower(name) = lower($2)`, [id, name]);
    }
    s[key] = id;
  };

  await post(ann, 'ann', { status: 'hello #Cats' });
  await remoteStatus('rex', '<p>far away #cats #dogs</p>', ['cats', 'dogs']);
  await post(ben, 'ben', { status: 'ben here #dogs' });
  await post(ann, 'annUnlisted', { status: 'quiet #cats', visibility: 'unlisted' });
  await post(ann, 'annPrivate', { status: 'private #cats', visibility: 'private' });
  await post(ben, 'benReplyToAnn', { status: '@ann a reply #cats', in_reply_to_id: s.ann });
  await post(ann, 'annSelfReply', { status: 'and more #CATS #Dogs', in_reply_to_id: s.ann });
  const boost = await ben.api(`/api/v1/statuses/${s.ann}/reblog`, { method: 'POST' });
  expect(boost.status).toBe(200);
  s.benBoost = boost.body.id;
  await post(sid, 'sid', { status: 'silenced #cats' });
  await post(mo, 'mo', { status: 'muted #cats' });
  await remoteStatus('rex2', '<p>birds</p>', ['birds']);
  await post(ann, 'annBirds', { status: '#birds #cats' });
  await sql.query(`update accounts set silenced_at = now() where id = $1`, [sid.account.id]);
  expect((await viewer.api(`/api/v1/accounts/${mo.account.id}/mute`, { method: 'POST' })).status).toBe(200);
}, 60_000);
afterAll(async () => roost?.close());

const keysOf = (body: { id: string }[]) => body.map((x) => Object.keys(s).find((k) => s[k] === x.id) ?? x.id);
const anon = async (path: string) => {
  const r = await apiRequest(roost, path);
  expect(r.status).toBe(200);
  return keysOf(r.body);
};
const signedIn = async (path: string) => {
  const r = await viewer.api(path);
  expect(r.status).toBe(200);
  return keysOf(r.body);
};

describe('GET /api/v1/timelines/public', () => {
  it('shows public statuses, no reblogs, no replies to others, nothing from silenced accounts, to anyone', async () => {
    expect(await anon('/api/v1/timelines/public')).toEqual(['annBirds', 'rex2', 'mo', 'annSelfReply', 'ben', 'rex', 'ann']);
    expect(await anon('/api/v1/timelines/public?local=true')).toEqual(['annBirds', 'mo', 'annSelfReply', 'ben', 'ann']);
    expect(await anon('/api/v1/timelines/public?remote=true')).toEqual(['rex2', 'rex']);
    // Both: everything, as Mastodon.
    expect(await anon('/api/v1/timelines/public?local=true&remote=true')).toEqual(['annBirds', 'rex2', 'mo', 'annSelfReply', 'ben', 'rex', 'ann']);
    // No status here has media (test/media/media.test.ts has the pictures).
    expect(await anon('/api/v1/timelines/public?only_media=true')).toEqual([]);
  });

  it("leaves out what the viewer mutes, blocks, is blocked by, and blocked domains", async () => {
    expect(await signedIn('/api/v1/timelines/public')).toEqual(['annBirds', 'rex2', 'annSelfReply', 'ben', 'rex', 'ann']);
    expect((await ben.api(`/api/v1/accounts/${viewer.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await viewer.api('/api/v1/domain_blocks', { method: 'POST', body: { domain: 'far.example' } })).status).toBe(200);
    expect(await signedIn('/api/v1/timelines/public')).toEqual(['annBirds', 'annSelfReply', 'ann']);
    expect((await viewer.api(`/api/v1/accounts/${ann.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect(await signedIn('/api/v1/timelines/public')).toEqual([]);
    // Signed out, all of it still.
    expect(await anon('/api/v1/timelines/public?limit=2')).toEqual(['annBirds', 'rex2']);
    expect((await viewer.api(`/api/v1/accounts/${ann.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    expect((await ben.api(`/api/v1/accounts/${viewer.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    expect((await viewer.api('/api/v1/domain_blocks?domain=far.example', { method: 'DELETE' })).status).toBe(200);
  });

  it('pages with the Link header', async () => {
    const r = await apiRequest(roost, '/api/v1/timelines/public?local=true&limit=2');
    expect(keysOf(r.body)).toEqual(['annBirds', 'mo']);
    const base = `${roost.url}/api/v1/timelines/public?local=true&limit=2`;
    expect(r.headers.get('link')).toBe(`<${base}&max_id=${s.mo}>; rel="next", <${base}&min_id=${s.annBirds}>; rel="prev"`);
    expect(await anon(`/api/v1/timelines/public?local=true&limit=2&max_id=${s.mo}`)).toEqual(['annSelfReply', 'ben']);
    expect(await anon(`/api/v1/timelines/public?local=true&limit=2&min_id=${s.ann}`)).toEqual(['annSelfReply', 'ben']);
  });
});

describe('GET /api/v1/timelines/tag/:hashtag', () => {
  it('matches the tag in any case, replies included, reblogs and non-public ones not', async () => {
    expect(await anon('/api/v1/timelines/tag/cats')).toEqual(['annBirds', 'mo', 'annSelfReply', 'benReplyToAnn', 'rex', 'ann']);
    expect(await anon('/api/v1/timelines/tag/CATS')).toEqual(['annBirds', 'mo', 'annSelfReply', 'benReplyToAnn', 'rex', 'ann']);
    expect(await anon('/api/v1/timelines/tag/cats?local=true')).toEqual(['annBirds', 'mo', 'annSelfReply', 'benReplyToAnn', 'ann']);
    expect(await anon('/api/v1/timelines/tag/cats?remote=true')).toEqual(['rex']);
    expect(await signedIn('/api/v1/timelines/tag/cats')).toEqual(['annBirds', 'annSelfReply', 'benReplyToAnn', 'rex', 'ann']);
    expect(await anon('/api/v1/timelines/tag/nobody_uses_this')).toEqual([]);
    // A name no hashtag can have matches nothing (and is no error).
    expect(await anon('/api/v1/timelines/tag/c%00ts')).toEqual([]);
    expect(await anon('/api/v1/timelines/tag/cats?all[]=no%20such')).toEqual([]);
  });

  it('takes any[], all[] and none[]', async () => {
    expect(await anon('/api/v1/timelines/tag/dogs?any[]=birds')).toEqual(['annBirds', 'rex2', 'annSelfReply', 'ben', 'rex']);
    expect(await anon('/api/v1/timelines/tag/cats?all[]=dogs')).toEqual(['annSelfReply', 'rex']);
    expect(await anon('/api/v1/timelines/tag/cats?all[]=Dogs&all[]=birds')).toEqual([]);
    expect(await anon('/api/v1/timelines/tag/cats?none[]=dogs&none[]=birds')).toEqual(['mo', 'benReplyToAnn', 'ann']);
    expect(await anon('/api/v1/timelines/tag/dogs?any[]=cats&none[]=birds&local=true')).toEqual(['mo', 'annSelfReply', 'benReplyToAnn', 'ben', 'ann']);
  });
});
