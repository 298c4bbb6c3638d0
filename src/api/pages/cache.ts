/**
 * The public pages' micro-cache: an anonymous visitor's page is the same for everybody, so a page
 * rendered once is served again from memory for `pages.cacheSeconds` (10 by default; browsers and
 * proxies keep it 60 s by its Cache-Control anyway), by a key made of the URL's parts that decide
 * the page (never the raw query, which anyone could vary). A hit costs no statement. At most
 * MAX_ENTRIES pages are kept, the oldest dropped first; the instance's clock decides the age.
 */
import { stringResponse } from '../../http/index.ts';

export const MAX_ENTRIES = 500;

interface Entry {
  at: number;
  status: number;
  headers: [string, string][];
  body: string;
}

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: () => number;
  private readonly now: () => number;

  constructor(ttlMs: () => number, now: () => number) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  async get(key: string, render: () => Promise<Response>): Promise<Response> {
    const ttl = this.ttlMs();
    if (ttl <= 0) return render();
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < ttl && now >= hit.at) return stringResponse(hit.body, { status: hit.status, headers: hit.headers });
    const res = await render();
    const body = await res.clone().text();
    this.entries.delete(key);
    this.entries.set(key, { at: now, status: res.status, headers: [...res.headers], body });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return res;
  }
}
