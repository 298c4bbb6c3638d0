import { generateKeyPair as generateKeyPairCb, type KeyObject } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';

/**
 * Key pairs for local actors: RSA-2048 (HTTP signatures, what Mastodon verifies) and Ed25519
 * (object integrity proofs). Node's asynchronous generateKeyPair runs in libuv's thread pool, so a
 * sign-up never stalls the event loop.
 */
export interface JwkPair {
  algorithm: 'RSASSA-PKCS1-v1_5' | 'Ed25519';
  publicJwk: JsonWebKey;
  privateJwk: JsonWebKey;
}

function gen(type: 'rsa' | 'ed25519'): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    const cb = (err: Error | null, publicKey: KeyObject, privateKey: KeyObject) =>
      err ? reject(err) : resolve({ publicKey, privateKey });
    if (type === 'rsa') generateKeyPairCb('rsa', { modulusLength: 2048, publicExponent: 0x10001 }, cb);
    else generateKeyPairCb('ed25519', {}, cb);
  });
}

export async function generateActorKeys(): Promise<JwkPair[]> {
  const [rsa, ed] = await Promise.all([gen('rsa'), gen('ed25519')]);
  return [
    {
      algorithm: 'RSASSA-PKCS1-v1_5',
      publicJwk: { ...rsa.publicKey.export({ format: 'jwk' }), alg: 'RS256', key_ops: ['verify'], ext: true },
      privateJwk: { ...rsa.privateKey.export({ format: 'jwk' }), alg: 'RS256', key_ops: ['sign'], ext: true },
    },
    {
      algorithm: 'Ed25519',
      publicJwk: { ...ed.publicKey.export({ format: 'jwk' }), key_ops: ['verify'], ext: true },
      privateJwk: { ...ed.privateKey.export({ format: 'jwk' }), key_ops: ['sign'], ext: true },
    },
  ];
}
