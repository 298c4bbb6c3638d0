/**
 * A lone UTF-16 surrogate (a JSON "\ud800" escape) has no UTF-8 form: PostgreSQL refuses it in a
 * json value and Node would store U+FFFD in its place in text (issue 24, item 7: on follow it reached
 * the follow actor's snapshot and answered 500). Every request parameter with one is refused once,
 * in the parameter layer, with 400 as Rails refuses a parameter that is not valid UTF-8, and nothing
 * is written. `languages` on follow is validated as Mastodon's Follow does (422 for an unknown code).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
});
afterAll(async () => roost?.close());

const count = async (table: string) => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
const ENCODING = { error: 'Invalid request parameters: Invalid encoding for parameter' };

describe('a lone surrogate in a request parameter', () => {
  it('is refused with 400 on follow, and nothing is written', async () => {
    for (const lone of ['\ud800', 'en\udfff', '\udc00\ud800']) {
      const res = await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { body: { languages: [lone] } });
      expect([res.status, res.body]).toEqual([400, ENCODING]);
    }
    expect(await count('follows')).toBe(0);
    // A well-formed pair is fine (and then no language: 422, as Mastodon's LanguageValidator).
    const unknown = await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { body: { languages: ['\ud83d\ude00', 'xx-nope'] } });
    expect([unknown.status, unknown.body]).toEqual([
      422,
      { error: 'Validation failed: Languages is invalid', details: { languages: [{ error: 'ERR_INVALID', description: 'is invalid' }] } },
    ]);
    expect(await count('follows')).toBe(0);
    const ok = await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { body: { languages: ['de', 'zh-TW'] } });
    expect([ok.status, ok.body.following, ok.body.languages]).toEqual([200, true, ['de', 'zh-TW']]);
  });

  it('is refused wherever it comes: keys, nested values, other routes', async () => {
    const statuses = await count('statuses');
    const filters = await count('filters');
    const bodies: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/statuses', { status: 'hello \ud800 world' }],
      ['POST', '/api/v1/statuses', { status: 'hi', poll: { options: ['a', 'b\udbff'], expires_in: 3600 } }],
      ['POST', '/api/v2/filters', { title: 'f', context: ['home'], keywords_attributes: [{ keyword: '\udfffx' }] }],
      ['PATCH', '/api/v1/accounts/update_credentials', { display_name: 'x', fields_attributes: { '0': { name: 'n', value: '\ud800' } } }],
      ['POST', '/api/v1/statuses', { ['stat\ud800us']: 'x' }],
    ];
    for (const [method, path, body] of bodies) {
      const res = await alice.api(path, { method, body });
      expect([path, res.status, res.body]).toEqual([path, 400, ENCODING]);
    }
    expect([await count('statuses'), await count('filters')]).toEqual([statuses, filters]);
    expect((await alice.api('/api/v1/accounts/verify_credentials')).body.display_name).not.toBe('x');
  });
});
