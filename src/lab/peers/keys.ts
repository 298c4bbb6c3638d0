/**
 * Keys of the light peers. Generating an RSA key costs tens of milliseconds and holds a few KB, so
 * every peer of one software signs with the same key pair, made once per process on first use
 * (250 peers cost four keys). Each actor still has its own keyId and document: a receiver cannot
 * tell, and keys are looked up by keyId, never by value.
 *
 * Public keys read from other servers' documents are parsed once per PEM for the whole process:
 * many peers cache the same Roost's key, and a KeyObject is shared, not copied.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { PeerSoftware } from './types.ts';

export interface SoftwareKey {
  privateKey: KeyObject;
  publicKeyPem: string;
}

const softwareKeys = new Map<PeerSoftware, SoftwareKey>();

export function softwareKey(software: PeerSoftware): SoftwareKey {
  let key = softwareKeys.get(software);
  if (!key) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    key = { privateKey: pair.privateKey, publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
    softwareKeys.set(software, key);
  }
  return key;
}

const parsed = new Map<string, KeyObject>();
/** Bounds the process-wide PEM table (a lab holds a few hundred distinct keys at most). */
const MAX_PARSED = 4096;

export function publicKeyFromPem(pem: string): KeyObject | null {
  const hit = parsed.get(pem);
  if (hit) return hit;
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    return null;
  }
  if (key.asymmetricKeyType !== 'rsa') return null;
  if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
  parsed.set(pem, key);
  return key;
}
