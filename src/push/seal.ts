/**
 * The access token a push payload carries (Mastodon sends it so a client's service worker can
 * fetch the notification), kept sealed: AES-256-GCM under a key derived (HKDF-SHA256) from the
 * instance's secret_key_base, so the database alone never yields a usable token.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Services } from '../context.ts';

const keys = new WeakMap<Services, Buffer>();

function keyOf(services: Services): Buffer {
  let key = keys.get(services);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', services.secrets.secretKeyBase, Buffer.alloc(0), 'roost web push access token', 32));
    keys.set(services, key);
  }
  return key;
}

/** base64url(iv ‖ tag ‖ ciphertext). */
export function sealToken(services: Services, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(services), iv);
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** Opened tokens, per instance, bounded: a push to a subscription opens its token once. */
const opened = new WeakMap<Services, Map<string, string>>();
const OPENED_MAX = 10_000;

/** The token, or null when it cannot be opened (the secret changed). */
export function openToken(services: Services, sealed: string): string | null {
  let cache = opened.get(services);
  if (!cache) opened.set(services, (cache = new Map()));
  const hit = cache.get(sealed);
  if (hit !== undefined) return hit;
  const token = openSealed(services, sealed);
  if (token !== null) {
    if (cache.size >= OPENED_MAX) cache.clear();
    cache.set(sealed, token);
  }
  return token;
}

function openSealed(services: Services, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(services), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
