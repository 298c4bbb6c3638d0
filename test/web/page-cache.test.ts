/** The pages' micro-cache on its own: time to live on the given clock, and its bounds. */
import { describe, it, expect } from 'vitest';
import { PageCache, MAX_ENTRIES, MAX_CHARS } from '../../src/api/pages/cache.ts';

describe('page cache', () => {
  it('serves a page again within the time to live, renders again after it, never with 0', async () => {
    let now = 1_000;
    let ttl = 10_000;
    let renders = 0;
    const cache = new PageCache(() => ttl, () => now);
    const render = async () => new Response(`page ${++renders}`, { status: 200, headers: { 'content-type': 'text/html' } });
    expect(await (await cache.get('a', render)).text()).toBe('page 1');
    now += 9_999;
    const hit = await cache.get('a', render);
    expect([await hit.text(), hit.status, hit.headers.get('content-type')]).toEqual(['page 1', 200, 'text/html']);
    now += 2;
    expect(await (await cache.get('a', render)).text()).toBe('page 2');
    ttl = 0;
    expect(await (await cache.get('a', render)).text()).toBe('page 3');
    expect(await (await cache.get('a', render)).text()).toBe('page 4');
  });

  it('keeps at most MAX_ENTRIES pages and MAX_CHARS characters, the oldest going first', async () => {
    const cache = new PageCache(() => 60_000, () => 0);
    let renders = 0;
    const render = (body: string) => async () => {
      renders++;
      return new Response(body);
    };
    for (let i = 0; i <= MAX_ENTRIES; i++) await cache.get(`k${i}`, render('x'));
    renders = 0;
    await cache.get(`k${MAX_ENTRIES}`, render('x'));
    expect(renders).toBe(0);
    await cache.get('k0', render('x'));
    expect(renders).toBe(1);
    const big = 'y'.repeat(MAX_CHARS / 5);
    for (let i = 0; i < 6; i++) await cache.get(`big${i}`, render(big));
    renders = 0;
    await cache.get('big5', render(big));
    expect(renders).toBe(0);
    await cache.get('big0', render(big));
    expect(renders).toBe(1);
  });
});
