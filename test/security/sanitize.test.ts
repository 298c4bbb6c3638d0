/**
 * The pieces under the hostile-peer tests, pinned one by one: the sanitiser's exact output,
 * plain-text names, http(s)-only links, the nesting scan, the inbox guard's context walk and the
 * short negative key cache.
 */
import { describe, it, expect } from 'vitest';
import { MemoryKvStore } from '@fedify/fedify';
import { plainText, safeHttpUrl, sanitizeRemoteHtml } from '../../src/lib/sanitize.ts';
import { jsonNestingExceeds } from '../../src/lib/json-depth.ts';
import { remoteContextUrls, signatureKeyId } from '../../src/federation/inbox-guard.ts';
import { UNAVAILABLE_KEY_TTL_MS, withShortUnavailableKeys } from '../../src/federation/loaders.ts';
import { Temporal } from '@js-temporal/polyfill';

describe('sanitizeRemoteHtml', () => {
  it.each([
    ['<p>Hi <a href="https://x.example/@a" class="u-url mention">@<span>a</span></a></p>', '<p>Hi <a href="https://x.example/@a" rel="nofollow noopener" target="_blank" class="u-url mention">@<span>a</span></a></p>'],
    ['<p>a</p><h1>b</h1><div>c</div>', '<p>a</p>bc'],
    ['<a href="gemini://g.example/">g</a>', '<a href="gemini://g.example/" rel="nofollow noopener" target="_blank">g</a>'],
    ['<a href="javascript:alert(1)">x</a>', '<span>x</span>'],
    ['<a>no href</a>', '<span>no href</span>'],
    ['<ol start="3" reversed onclick="x"><li value="2" style="x">a</li></ol>', '<ol start="3" reversed><li value="2">a</li></ol>'],
    ['<svg><a href="https://x"><text>t</text></a></svg>after', 'after'],
    ['<pre><code>let x = 1 &lt; 2;</code></pre>', '<pre><code>let x = 1 &lt; 2;</code></pre>'],
  ])('%s', (input, expected) => {
    expect(sanitizeRemoteHtml(input)).toBe(expected);
  });

  it('cuts to the limit without leaving a tag open, and never parses more than a bounded prefix', () => {
    const out = sanitizeRemoteHtml(`<p><b>${'x'.repeat(50)}</b></p>`, 20);
    expect(out.length).toBeLessThanOrEqual(20);
    expect(out).toMatch(/^<p><b>x+<\/b><\/p>$/);
    const t0 = performance.now();
    expect(sanitizeRemoteHtml('<i>'.repeat(1_000_000)).length).toBeLessThanOrEqual(10_000);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});

describe('plainText and safeHttpUrl', () => {
  it('strips markup, drops script contents, decodes entities, collapses whitespace, cuts by characters', () => {
    expect(plainText('<b>Al</b>ice\n\n &amp;  <script>evil()</script>Bob\u0007')).toBe('Alice & Bob');
    expect(plainText('😀'.repeat(150))).toBe('😀'.repeat(100));
    expect(plainText('x'.repeat(2_000_000))).toHaveLength(100);
  });
  it('keeps absolute http(s) URLs without credentials only', () => {
    expect(safeHttpUrl('https://a.example/x.png')).toBe('https://a.example/x.png');
    expect(safeHttpUrl(new URL('http://a.example/'))).toBe('http://a.example/');
    for (const bad of ['javascript:alert(1)', 'data:image/png;base64,AAAA', 'file:///etc/passwd', 'https://u:p@a.example/', '/relative', '', null, `https://a.example/${'x'.repeat(3000)}`]) {
      expect(safeHttpUrl(bad)).toBeNull();
    }
  });
});

describe('the inbox guard pieces', () => {
  it('measures nesting without parsing, ignoring brackets inside strings', () => {
    expect(jsonNestingExceeds('[[[]]]', 3)).toBe(false);
    expect(jsonNestingExceeds('[[[[]]]]', 3)).toBe(true);
    expect(jsonNestingExceeds('{"a":"[[[[[[\\"[[[["}', 1)).toBe(false);
    expect(jsonNestingExceeds('['.repeat(100_000), 64)).toBe(true);
    // Many openers side by side are shallow (the count alone does not decide); nested past the
    // limit after many shallow ones is deep; exactly at the limit is not past it.
    expect(jsonNestingExceeds(`[${'{},'.repeat(200)}{}]`, 3)).toBe(false);
    expect(jsonNestingExceeds(`[${'{},'.repeat(200)}[[[[]]]]]`, 3)).toBe(true);
    expect(jsonNestingExceeds(`${'['.repeat(64)}${']'.repeat(64)}`, 64)).toBe(false);
    expect(jsonNestingExceeds(`${'['.repeat(65)}${']'.repeat(65)}`, 64)).toBe(true);
    expect(jsonNestingExceeds(`{"a":"${'{'.repeat(100)}"}`, 3)).toBe(false);
  });
  it('finds every context URL: top level, arrays, scoped contexts, @import', () => {
    const urls = remoteContextUrls({
      '@context': ['https://www.w3.org/ns/activitystreams', { t: { '@id': 'x:t', '@context': 'https://a.example/scoped' } }, { '@import': 'https://b.example/imp' }],
      object: { '@context': 'https://c.example/inner', tag: [{ '@context': ['https://d.example/deep'] }] },
    });
    expect([...urls].sort()).toEqual(['https://a.example/scoped', 'https://b.example/imp', 'https://c.example/inner', 'https://d.example/deep', 'https://www.w3.org/ns/activitystreams']);
  });
  it('reads the keyId of either signature spec', () => {
    expect(signatureKeyId(new Headers({ signature: 'keyId="https://a.example/u#k",algorithm="rsa-sha256",headers="date",signature="x"' }))?.href).toBe('https://a.example/u#k');
    expect(signatureKeyId(new Headers({ 'signature-input': 'sig1=("@method");keyid="https://b.example/k";alg="rsa-v1_5-sha256"' }))?.href).toBe('https://b.example/k');
    expect(signatureKeyId(new Headers())).toBeNull();
  });
});

describe('the negative key cache', () => {
  it('keeps an unavailable key and its fetch error for seconds; fetched keys and other entries as asked', async () => {
    const seen: { key: readonly unknown[]; ttl?: number }[] = [];
    const inner = new MemoryKvStore();
    const spy = {
      get: (key: never) => inner.get(key),
      delete: (key: never) => inner.delete(key),
      list: (prefix?: never) => inner.list(prefix),
      set: (key: readonly string[], value: unknown, options?: { ttl?: Temporal.Duration }) => {
        seen.push({ key, ttl: options?.ttl ? Temporal.Duration.from(options.ttl).total({ unit: 'millisecond' }) : undefined });
        return inner.set(key as never, value, options as never);
      },
    };
    const kv = withShortUnavailableKeys(spy as never);
    const tenMinutes = { ttl: Temporal.Duration.from({ minutes: 10 }) as never };
    await kv.set(['_fedify', 'publicKey', 'https://a.example/k'], null, tenMinutes);
    await kv.set(['_fedify', 'publicKey', '__fetchError', 'https://a.example/k'], { errorName: 'E', errorMessage: 'm' }, tenMinutes);
    await kv.set(['_fedify', 'publicKey', 'https://b.example/k'], { publicKeyPem: '…' });
    await kv.set(['_fedify', 'remoteDocument', 'https://c.example/'], null, tenMinutes);
    expect(seen.map((s) => s.ttl)).toEqual([UNAVAILABLE_KEY_TTL_MS, UNAVAILABLE_KEY_TTL_MS, undefined, 600_000]);
    expect(await kv.get(['_fedify', 'publicKey', 'https://b.example/k'])).toEqual({ publicKeyPem: '…' });
  });
});
