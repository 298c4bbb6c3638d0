/**
 * What the inbox keeps in memory so a signed delivery from a known server costs no database round
 * trip for its key and one JSON-LD parse of its activity (src/federation/loaders.ts
 * withMemoryKeyCache, src/federation/fedify-seams.ts), pinned piece by piece; the inbox tests
 * (hostile-activities, interop, duplicates…) run the whole path.
 */
import { describe, expect, it } from 'vitest';
import { MemoryKvStore, type KvKey } from '@fedify/fedify';
import { Activity, Create, CryptographicKey } from '@fedify/vocab';
import { Temporal } from '@js-temporal/polyfill';
import { createManualClock } from '../../src/lib/clock.ts';
import { KEY_MEMORY_TTL_MS, withMemoryKeyCache } from '../../src/federation/loaders.ts';
import { parseActivitiesOnce } from '../../src/federation/fedify-seams.ts';

const PEM = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwvtsx6bQr6y8r4TbyAKt
1vAXurNdj0q7CwF80cac47pHdFsSiBVfWz7XgnoioAb28P/5tBb3ojfgpUxNESN8
sZ2suxMJ26FOUgtE5QgDQFkITm5z01kA3FdRWEC8/1Jpqfi/O1lbZRsnX1iZcvRz
bqLzzr6ywqjwVl0Wt0ldLUzyes/gN8NBr9pr3lkAYdcPgYxsbHlyaSjefS5XTySH
rVds5mgAYaz50a8nYoIAc9CiqYgOq1b9eoFH6Nka0wRB61lAgRC+AlfYugbUdrLD
igOPQounUlzPlwtC0evdoCsHeND43IYHKWbX7zg7Fht/wQhO81L3fZllxFoPTZ6K
4QIDAQAB
-----END PUBLIC KEY-----`;

function countingStore() {
  const inner = new MemoryKvStore();
  const reads: string[] = [];
  const kv = {
    get: (key: KvKey) => (reads.push(key.join(' ')), inner.get(key)),
    set: (key: KvKey, value: unknown, options?: never) => inner.set(key, value, options),
    delete: (key: KvKey) => inner.delete(key),
    list: (prefix?: KvKey) => inner.list(prefix),
  };
  return { kv, inner, reads };
}

const keyDoc = (id: string) => ({ '@context': 'https://w3id.org/security/v1', id, type: 'CryptographicKey', owner: id.split('#')[0], publicKeyPem: PEM });

describe('withMemoryKeyCache', () => {
  it('reads a key from the store once, then from memory until it expires; writes and deletes go through', async () => {
    const { kv, inner, reads } = countingStore();
    const clock = createManualClock();
    const cached = withMemoryKeyCache(kv as never, clock);
    const key: KvKey = ['_fedify', 'publicKey', 'https://a.example/users/a#main-key'];
    await inner.set(key, keyDoc('https://a.example/users/a#main-key'));
    const first = await cached.get(key);
    expect(first).toEqual(keyDoc('https://a.example/users/a#main-key'));
    expect(await cached.get(key)).toBe(first);
    expect(reads).toHaveLength(1);

    // A key written (Fedify refetched it after a failed verify) replaces the one in memory.
    await cached.set(key, keyDoc('https://a.example/users/a#other'));
    expect(await cached.get(key)).toEqual(keyDoc('https://a.example/users/a#other'));
    expect(reads).toHaveLength(1);
    await cached.delete(key);
    expect(await cached.get(key)).toBeUndefined();
    expect(reads).toHaveLength(2);

    await inner.set(key, keyDoc('https://a.example/users/a#main-key'));
    await cached.get(key);
    clock.advance(KEY_MEMORY_TTL_MS - 1);
    await cached.get(key);
    expect(reads).toHaveLength(3);
    clock.advance(2);
    await inner.set(key, keyDoc('https://a.example/users/a#changed'));
    expect(await cached.get(key)).toEqual(keyDoc('https://a.example/users/a#changed'));
    expect(reads).toHaveLength(4);
  });

  it('keeps neither unavailable keys, fetch errors nor other entries in memory, and at most `max` keys', async () => {
    const { kv, inner, reads } = countingStore();
    const cached = withMemoryKeyCache(kv as never, createManualClock(), KEY_MEMORY_TTL_MS, 2);
    const gone: KvKey = ['_fedify', 'publicKey', 'https://b.example/k'];
    const error: KvKey = ['_fedify', 'publicKey', '__fetchError', 'https://b.example/k'];
    const doc: KvKey = ['_fedify', 'remoteDocument', 'https://b.example/k'];
    await cached.set(gone, null, { ttl: Temporal.Duration.from({ seconds: 30 }) } as never);
    await cached.set(error, { errorName: 'E', errorMessage: 'm' }, { ttl: Temporal.Duration.from({ seconds: 30 }) } as never);
    await inner.set(doc, { document: {} });
    for (let i = 0; i < 2; i++) for (const k of [gone, error, doc]) await cached.get(k);
    expect(reads).toHaveLength(6);

    reads.length = 0;
    const keys = ['k1', 'k2', 'k3'].map((k): KvKey => ['_fedify', 'publicKey', `https://c.example/${k}`]);
    for (const k of keys) await inner.set(k, keyDoc(`https://c.example/${k[2]}`));
    for (const k of keys) await cached.get(k); // k1 is dropped for k3
    await cached.get(keys[2]!);
    await cached.get(keys[1]!);
    await cached.get(keys[0]!);
    expect(reads.map((r) => r.split('/').pop())).toEqual(['k1', 'k2', 'k3', 'k1']);
  });

  it('builds a key from a remembered document once: the same CryptographicKey each time', async () => {
    const { kv, inner } = countingStore();
    const cached = withMemoryKeyCache(kv as never, createManualClock());
    const key: KvKey = ['_fedify', 'publicKey', 'https://d.example/users/d#main-key'];
    await inner.set(key, keyDoc('https://d.example/users/d#main-key'));
    const doc = await cached.get(key);
    const a = await CryptographicKey.fromJsonLd(doc);
    const b = await CryptographicKey.fromJsonLd(await cached.get(key));
    expect(b).toBe(a);
    expect(a.ownerId?.href).toBe('https://d.example/users/d');
    expect(a.publicKey?.algorithm.name).toBe('RSASSA-PKCS1-v1_5');
    // Any other document is built afresh.
    const c = await CryptographicKey.fromJsonLd(keyDoc('https://d.example/users/d#main-key'));
    expect(c).not.toBe(a);
    expect(c.id?.href).toBe(a.id?.href);
  });
});

describe('parseActivitiesOnce', () => {
  it('hands the first parse of an object to the next parse of that object, once', async () => {
    parseActivitiesOnce();
    const json = {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: 'https://e.example/a/1',
      type: 'Create',
      actor: 'https://e.example/users/e',
      object: { id: 'https://e.example/n/1', type: 'Note', content: 'hi', attributedTo: 'https://e.example/users/e' },
    };
    const first = await Activity.fromJsonLd(json);
    expect(first).toBeInstanceOf(Create);
    expect(await Activity.fromJsonLd(json)).toBe(first);
    const third = await Activity.fromJsonLd(json);
    expect(third).not.toBe(first);
    expect(third.id?.href).toBe('https://e.example/a/1');
    expect(await Activity.fromJsonLd({ ...json })).not.toBe(third);
    // A failed parse is not kept: the next one fails again.
    const bad = { ...json, id: 'not a url' };
    await expect(Activity.fromJsonLd(bad)).rejects.toThrow();
    await expect(Activity.fromJsonLd(bad)).rejects.toThrow();
  });
});
