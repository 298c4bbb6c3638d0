/**
 * GET /api/v2/search with resolve=true between two real instances: a searcher on A finds an
 * account of B by `user@domain` and a status of B by its URL (fetched, stored, rendered), but
 * not B's followers-only post; an unreachable or silent remote answers an empty result within
 * `federation.resolveTimeoutSeconds`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser;
let carol: TestUser;
let silent: net.Server;
let silentPort: number;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost({ federation: { resolveTimeoutSeconds: 4 } }), startTestRoost()]);
  alice = await createTestUser(a, 'alice');
  carol = await createTestUser(b, 'carol');
  // A server that accepts connections and never answers.
  silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as AddressInfo).port;
});
afterAll(async () => {
  silent?.close();
  await Promise.all([a?.close(), b?.close()]);
});

const search = (q: string, extra = '') => alice.api(`/api/v2/search?q=${encodeURIComponent(q)}&resolve=true${extra}`);

describe('resolve=true', () => {
  it('finds a remote account by user@domain and @user@domain', async () => {
    const res = await search(`carol@${b.config.domain}`);
    expect(res.status).toBe(200);
    expect(res.body.accounts.map((x: { acct: string }) => x.acct)).toEqual([`carol@${b.config.domain}`]);
    expect(res.body.accounts[0].url).toBe(b.at('/@carol'));
    const again = await search(`@carol@${b.config.domain}`, '&type=accounts');
    expect(again.body.accounts[0].id).toBe(res.body.accounts[0].id);
    // Without resolve, now that it is known: found by prefix.
    const known = await alice.api(`/api/v2/search?q=${encodeURIComponent(`carol@${b.config.domain}`)}`);
    expect(known.body.accounts[0].id).toBe(res.body.accounts[0].id);
  });

  it('finds a remote status by its URL, and an account by its profile URL', async () => {
    const posted = await carol.api('/api/v1/statuses', { body: { status: 'Peregrines nest on the cathedral' } });
    expect(posted.status).toBe(200);
    const res = await search(posted.body.uri);
    expect(res.status).toBe(200);
    expect(res.body.accounts).toEqual([]);
    expect(res.body.statuses).toHaveLength(1);
    expect(res.body.statuses[0]).toMatchObject({ uri: posted.body.uri, content: posted.body.content, account: { acct: `carol@${b.config.domain}` } });
    // Found again without fetching, by URI.
    const again = await search(posted.body.uri, '&type=statuses');
    expect(again.body.statuses[0].id).toBe(res.body.statuses[0].id);
    // Text search finds it too once its author is indexable; a domain block hides it.
    await a.services.db.sql.query(`update accounts set indexable = true where uri = $1`, [b.at('/users/carol')]);
    expect((await alice.api(`/api/v2/search?q=peregrines&type=statuses`)).body.statuses.map((s: { uri: string }) => s.uri)).toEqual([posted.body.uri]);
    expect((await alice.api('/api/v1/domain_blocks', { body: { domain: b.config.domain } })).status).toBe(200);
    expect((await alice.api(`/api/v2/search?q=peregrines&type=statuses`)).body.statuses).toEqual([]);
    await alice.api('/api/v1/domain_blocks', { method: 'DELETE', body: { domain: b.config.domain } });
    // A status not known yet, by its page URL (/@user/:id): fetched as ActivityPub too.
    const other = await carol.api('/api/v1/statuses', { body: { status: 'Merlins hunt over the dunes' } });
    const byPage = await search(other.body.url);
    expect(byPage.body.statuses.map((s: { uri: string }) => s.uri)).toEqual([other.body.uri]);
    // The profile URL names the account.
    const profile = await search(b.at('/@carol'));
    expect(profile.body.accounts.map((x: { acct: string }) => x.acct)).toEqual([`carol@${b.config.domain}`]);
    expect(profile.body.statuses).toEqual([]);
  });

  it('does not find a followers-only post by its URL', async () => {
    const posted = await carol.api('/api/v1/statuses', { body: { status: 'Only for my followers', visibility: 'private' } });
    expect(posted.status).toBe(200);
    const res = await search(posted.body.uri);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accounts: [], statuses: [] });
    const text = await alice.api(`/api/v2/search?q=followers&type=statuses`);
    expect(text.body.statuses).toEqual([]);
  });

  it('answers an empty result for an unreachable or silent server', async () => {
    for (const q of [
      'nobody@127.0.0.1:1',
      `nobody@127.0.0.1:${silentPort}`,
      'http://127.0.0.1:1/users/nobody',
      `http://127.0.0.1:${silentPort}/users/nobody/statuses/1`,
      b.at('/users/nobody'),
      b.at('/users/carol/statuses/999999'),
    ]) {
      const res = await search(q);
      expect(res.status, q).toBe(200);
      expect(res.body, q).toMatchObject({ accounts: [], statuses: [] });
    }
  });
});
