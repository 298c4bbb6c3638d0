/**
 * The profile directory (GET /api/v1/directory) and follow suggestions v2 (GET /api/v2/suggestions,
 * DELETE /api/v1/suggestions/:id) through the real server: who is listed, in which order, what a
 * viewer's blocks and mutes remove; each suggestion source with Mastodon 4.3's `sources`; a
 * fixed number of statements per page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let r: TestRoost;

beforeAll(async () => {
  r = await startTestRoost();
});
afterAll(async () => r?.close());

const discoverable = (u: TestUser, on = true) => u.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: on } });
const usernames = (body: { username: string }[]) => body.map((a) => a.username);

describe('GET /api/v1/directory', () => {
  let d1: TestUser, d2: TestUser, d3: TestUser, shy: TestUser, viewer: TestUser;
  beforeAll(async () => {
    // One after the other: `new` orders by id.
    d1 = await createTestUser(r, 'dir1');
    d2 = await createTestUser(r, 'dir2');
    d3 = await createTestUser(r, 'dir3');
    shy = await createTestUser(r, 'dirshy');
    viewer = await createTestUser(r, 'dirviewer');
    for (const u of [d1, d2, d3]) expect((await discoverable(u)).status).toBe(200);
    await discoverable(shy, false);
    // dir2 posted last, dir1 before; dir3 never.
    await d1.api('/api/v1/statuses', { body: { status: 'first' } });
    await d2.api('/api/v1/statuses', { body: { status: 'second' } });
  });

  it('lists discoverable accounts, by latest status or newest', async () => {
    const active = await apiRequest(r, '/api/v1/directory');
    expect(active.status).toBe(200);
    expect(usernames(active.body)).toEqual(['dir2', 'dir1', 'dir3']);
    const fresh = await apiRequest(r, '/api/v1/directory?order=new&local=true');
    expect(usernames(fresh.body)).toEqual(['dir3', 'dir2', 'dir1']);
    expect(usernames((await apiRequest(r, '/api/v1/directory?order=new&offset=1&limit=1')).body)).toEqual(['dir2']);
    expect(usernames((await apiRequest(r, '/api/v1/directory?limit=100000')).body)).toEqual(['dir2', 'dir1', 'dir3']);
  });

  it('leaves out silenced, suspended and moved accounts, and those the viewer blocks or mutes', async () => {
    await viewer.api(`/api/v1/accounts/${d1.account.id}/block`, { method: 'POST' });
    await viewer.api(`/api/v1/accounts/${d3.account.id}/mute`, { method: 'POST' });
    expect(usernames((await viewer.api('/api/v1/directory')).body)).toEqual(['dir2']);
    await r.services.db.sql.query(`update accounts set silenced_at = now() where id = $1`, [d2.account.id]);
    expect(usernames((await apiRequest(r, '/api/v1/directory')).body)).toEqual(['dir1', 'dir3']);
    await r.services.db.sql.query(`update accounts set silenced_at = null where id = $1`, [d2.account.id]);
    const noScope = await createTestUser(r, 'dirnoscope', { scopes: ['write'] });
    expect((await noScope.api('/api/v1/directory')).status).toBe(403);
  });

  it('renders a page with a fixed number of statements', async () => {
    const count = async (limit: number) => (await capturedStatements(r, () => apiRequest(r, `/api/v1/directory?limit=${limit}`))).length;
    expect(await count(1)).toBe(await count(3));
  });
});

describe('GET /api/v2/suggestions', () => {
  it('names each source, merges an account several sources name, and forgets a dismissed one', async () => {
    const [me, friend, fof, staffPick, popular, loved, admin, ...fans] = await Promise.all(
      ['sgme', 'sgfriend', 'sgfof', 'sgstaff', 'sgpopular', 'sgloved', 'sgadmin', 'sgfan1', 'sgfan2', 'sgfan3'].map((n) => createTestUser(r, n)),
    );
    for (const u of [fof, staffPick, popular, loved]) await discoverable(u!);
    const sql = r.services.db.sql;
    // The fans were active lately; the admin has a role with permissions.
    await sql.query(`update users set current_sign_in_at = now() where account_id = any($1::bigint[])`, [fans.map((f) => f.account.id)]);
    await sql.query(`update users set role_id = (select id from user_roles where permissions <> '0' order by id limit 1) where account_id = $1`, [admin!.account.id]);
    // Friend of a friend.
    await me!.api(`/api/v1/accounts/${friend!.account.id}/follow`, { method: 'POST' });
    await friend!.api(`/api/v1/accounts/${fof!.account.id}/follow`, { method: 'POST' });
    // A staff pick: the admin follows and endorses it.
    await admin!.api(`/api/v1/accounts/${staffPick!.account.id}/follow`, { method: 'POST' });
    expect((await admin!.api(`/api/v1/accounts/${staffPick!.account.id}/pin`, { method: 'POST' })).status).toBe(200);
    // Popular: three active local followers (the friend of a friend too, so it has two sources).
    for (const f of fans) {
      await f.api(`/api/v1/accounts/${popular!.account.id}/follow`, { method: 'POST' });
      await f.api(`/api/v1/accounts/${fof!.account.id}/follow`, { method: 'POST' });
    }
    // Interactions: three local accounts favourite or reblog loved's post.
    const lovedPost = await loved!.api('/api/v1/statuses', { body: { status: 'a post people like' } });
    await fans[0]!.api(`/api/v1/statuses/${lovedPost.body.id}/favourite`, { method: 'POST' });
    await fans[1]!.api(`/api/v1/statuses/${lovedPost.body.id}/reblog`, { method: 'POST' });
    await admin!.api(`/api/v1/statuses/${lovedPost.body.id}/favourite`, { method: 'POST' });

    const res = await me!.api('/api/v2/suggestions?limit=80');
    expect(res.status).toBe(200);
    const got = res.body.map((s: { source: string; sources: string[]; account: { username: string } }) => [s.account.username, s.source, s.sources]);
    expect(got).toEqual([
      ['sgfof', 'past_interactions', ['friends_of_friends', 'most_followed']],
      ['sgstaff', 'staff', ['featured']],
      ['sgpopular', 'global', ['most_followed']],
      ['sgloved', 'global', ['most_interactions']],
    ]);
    expect(usernames((await me!.api('/api/v1/suggestions?limit=2')).body)).toEqual(['sgfof', 'sgstaff']);
    expect((await me!.api(`/api/v1/suggestions/${popular!.account.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await me!.api(`/api/v1/suggestions/999999999`, { method: 'DELETE' })).status).toBe(200);
    expect(usernames((await me!.api('/api/v1/suggestions')).body)).toEqual(['sgfof', 'sgstaff', 'sgloved']);
    // Following one removes it.
    await me!.api(`/api/v1/accounts/${staffPick!.account.id}/follow`, { method: 'POST' });
    expect(usernames((await me!.api('/api/v1/suggestions')).body)).toEqual(['sgfof', 'sgloved']);

    const count = async (limit: number) => (await capturedStatements(r, () => me!.api(`/api/v2/suggestions?limit=${limit}`))).length;
    expect(await count(1)).toBe(await count(40));
  });
});
