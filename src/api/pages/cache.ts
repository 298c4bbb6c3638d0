/**
 * The public pages' micro-cache: an anonymous visitor's page is the same for everybody, so a page
 * rendered once is served again from memory for `pages.cacheSeconds` (10 by default; browsers and
 * proxies keep it 60 s by its Cache-Control anyway), by a key made of the URL's parts that decide
 * the page (never the raw query, which anyone could vary). A hit costs no statement. At most
 * MAX_ENTRIES pages and MAX_CHARS of them are kept, the oldest dropped first; the instance's clock
 * decides the age.
 */
import { stringResponse } from '../../http/index.ts';

export const MAX_ENTRIES = 500;
/** And at most this many characters of pages in all (a profile of 20 posts is ~30 kB). */
export const MAX_CHARS = 8 * 1024 * 1024;

interface Entry {
  at: number;
  status: number;
  headers: [string, string][];
  body: string;
}

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
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
    this.drop(key);
    if (body.length <= MAX_CHARS / 4) {
      this.entries.set(key, { at: now, status: res.status, headers: [...res.headers], body });
      this.chars += body.length;
      while (this.entries.size > MAX_ENTRIES || this.chars > MAX_CHARS) this.drop(this.entries.keys().next().value!);
    }
    return res;
  }

  private drop(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.chars -= old.body.length;
    this.entries.delete(key);
  }
}
