/**
 * No route is swallowed by a parameter route. Walks Roost's whole route table and every route of
 * Mastodon's API (test/fixtures/mastodon-api-routes.txt):
 *
 * - each registered route, its parameters filled, reaches itself (no other pattern answers it);
 * - no Mastodon route reaches a Roost route through a parameter standing where Mastodon's path
 *   has a word. That is how GET /api/v2/notifications/policy once answered 404 "Record not found"
 *   from /api/v2/notifications/:group_key: a route Roost lacks must miss (404 from the router, or
 *   405), never land in another route's `:id`.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { buildRouter } from '../../src/api/routes.ts';
import { isMethodNotAllowed, type Router } from '../../src/http/router.ts';

let roost: TestRoost;
let router: Router;

beforeAll(async () => {
  roost = await startTestRoost();
  router = buildRouter(roost.services, roost.federation);
});
afterAll(async () => roost?.close());

/** A pattern's segments with each parameter filled by a value no static segment uses. */
function fill(pattern: string): string {
  return pattern
    .split('/')
    .map((seg) => {
      if (seg.startsWith('*')) return 'x/y';
      const colon = seg.indexOf(':');
      return colon === -1 ? seg : `${seg.slice(0, colon)}1`;
    })
    .join('/');
}

/** Whether segment `i` of `pattern` takes a value (a parameter, a prefixed one, or the wildcard). */
function variableAt(pattern: string, i: number): boolean {
  const segs = pattern.split('/');
  const wildcard = segs.findIndex((s) => s.startsWith('*'));
  if (wildcard !== -1 && i >= wildcard) return true;
  return (segs[i] ?? '').includes(':');
}

const MASTODON = readFileSync(new URL('../fixtures/mastodon-api-routes.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'))
  .map((l) => {
    const [method, path] = l.split(' ') as [string, string];
    return { method, path };
  });

describe('the route table', () => {
  it('reaches every registered route by its own pattern', () => {
    const wrong: string[] = [];
    for (const { method, pattern } of router.routes()) {
      const m = router.match(method, fill(pattern));
      const got = m === null ? 'nothing' : isMethodNotAllowed(m) ? `405 (${m.allowed.join(', ')})` : m.pattern;
      if (got !== pattern) wrong.push(`${method} ${pattern} → ${got}`);
    }
    expect(router.routes().length).toBeGreaterThan(200);
    expect(wrong).toEqual([]);
  });

  it("lets no Mastodon route land in a parameter where Mastodon's path has a word", () => {
    expect(MASTODON.length).toBeGreaterThan(250);
    const shadowed: string[] = [];
    for (const { method, path } of MASTODON) {
      const m = router.match(method, fill(path));
      if (m === null || isMethodNotAllowed(m)) continue;
      const segs = path.split('/');
      const words = segs.flatMap((seg, i) => (seg.includes(':') || !variableAt(m.pattern, i) ? [] : [seg]));
      if (words.length) shadowed.push(`${method} ${path} → ${m.pattern} (takes ${words.map((w) => `"${w}"`).join(', ')} as a parameter)`);
    }
    expect(shadowed).toEqual([]);
  });

  it('answers the notification policy and request routes themselves (once 404 "Record not found")', async () => {
    for (const [method, path, pattern] of [
      ['GET', '/api/v2/notifications/policy', '/api/v2/notifications/policy'],
      ['GET', '/api/v1/notifications/requests', '/api/v1/notifications/requests'],
      ['GET', '/api/v1/notifications/requests/merged', '/api/v1/notifications/requests/merged'],
      ['POST', '/api/v1/notifications/requests/accept', '/api/v1/notifications/requests/accept'],
      ['POST', '/api/v1/notifications/requests/12/dismiss', '/api/v1/notifications/requests/:id/dismiss'],
    ] as const) {
      const m = router.match(method, path);
      expect(m && !isMethodNotAllowed(m) ? m.pattern : m).toBe(pattern);
    }
  });
});
