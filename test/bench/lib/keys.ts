// The benches' RSA key pairs: RSASSA-PKCS1-v1_5 with SHA-256 at 2048 bits, what Roost makes for its
// own accounts (src/lib/keys.ts) and what Mastodon makes. Fedify's generateCryptoKeyPair defaults to
// 4096 bits, whose signatures cost about five times as much to make and four to verify: a bench that
// took those for one side measured key sizes, not software.

import { webcrypto } from 'node:crypto';

export const BENCH_RSA_BITS = 2048;

export function rsaKeyPair(bits = BENCH_RSA_BITS): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  );
}
