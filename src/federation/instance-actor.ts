/**
 * The instance actor: an Application actor that stands for the server itself, as Mastodon's
 * (`Account.representative`, served at /actor). Roost's own fetches — remote actors and keys,
 * objects, a reply's parents, a Move's target, the re-fetch of a forwarded object — are signed
 * with its key (./loaders.ts), so peers in authorized-fetch mode (Mastodon's secure mode,
 * GoToSocial's default) answer them. It is always served without a signature, as Mastodon's is:
 * a peer verifying our signed fetch must be able to fetch this key, even when it requires signed
 * fetches itself (otherwise two such servers could never start talking).
 *
 * Where it lives: /users/instance.actor, not Mastodon's /actor. Fedify serves one actor path,
 * /users/{identifier}, with its keys, its WebFinger answer and its signing (getDocumentLoader
 * needs an identifier its key-pairs dispatcher knows); the dot cannot occur in a local username
 * (USERNAME_RE), so no account can take it, and no peer locates an instance actor by its path
 * (they follow the keyId). Its preferredUsername is the server's host name, as Mastodon's is its
 * domain, so WebFinger `acct:HOST@HOST` finds it (FEP-2677's link from NodeInfo is not added).
 *
 * Its keys are made once (RSA-2048 for HTTP signatures, Ed25519 for proofs) and kept in
 * instance_actor_keys; concurrent first uses (or processes) agree through the table's key.
 */
import type { JsonWebKey, webcrypto } from 'node:crypto';
import { importJwk, type Context } from '@fedify/fedify';
import { Application, Endpoints } from '@fedify/vocab';
import type { Services } from '../context.ts';
import { generateActorKeys } from '../lib/keys.ts';

/** The instance actor's identifier in Fedify's actor path (/users/{identifier}). */
export const INSTANCE_ACTOR = 'instance.actor';

export interface ActorKeyPairValue {
  privateKey: webcrypto.CryptoKey;
  publicKey: webcrypto.CryptoKey;
}

/** The host name the instance actor is known by (its preferredUsername): the public URL's, without a port. */
export function instanceActorUsername(services: Services): string {
  return new URL(services.config.publicUrl).hostname;
}

/** The instance actor's id (an absolute URL). */
export function instanceActorUri(services: Services): string {
  return `${services.config.publicUrl}/users/${INSTANCE_ACTOR}`;
}

/** The keyId its RSA key is published under (Fedify names an actor's first key `#main-key`). */
export function instanceActorKeyId(services: Services): URL {
  return new URL(`${instanceActorUri(services)}#main-key`);
}

interface KeyRow {
  algorithm: string;
  public_jwk: JsonWebKey;
  private_jwk: JsonWebKey;
}

/** The stored key pairs, made and stored first when there are none (RSA first). */
async function loadOrCreateKeyRows(services: Services): Promise<KeyRow[]> {
  const read = () =>
    services.db.sql.query<KeyRow>(`select algorithm, public_jwk, private_jwk from instance_actor_keys order by algorithm desc`);
  let rows = await read();
  if (rows.length === 0) {
    const pairs = await generateActorKeys();
    const now = services.clock.now();
    for (const p of pairs) {
      await services.db.sql.query(
        `insert into instance_actor_keys (algorithm, public_jwk, private_jwk, created_at) values ($1, $2, $3, $4) on conflict (algorithm) do nothing`,
        [p.algorithm, JSON.stringify(p.publicJwk), JSON.stringify(p.privateJwk), now],
      );
    }
    rows = await read();
  }
  // 'RSASSA-PKCS1-v1_5' sorts after 'Ed25519' descending: RSA first (Fedify signs with the first pair).
  return rows;
}

/**
 * The instance actor's key pairs, read (or made) once per instance and kept as a promise: every
 * signed fetch uses them.
 */
export function instanceActorKeys(services: Services): () => Promise<ActorKeyPairValue[]> {
  let cached: Promise<ActorKeyPairValue[]> | null = null;
  return () => {
    if (!cached) {
      cached = loadOrCreateKeyRows(services).then((rows) =>
        Promise.all(
          rows.map(async (r) => ({
            privateKey: await importJwk(typeof r.private_jwk === 'string' ? JSON.parse(r.private_jwk) : r.private_jwk, 'private'),
            publicKey: await importJwk(typeof r.public_jwk === 'string' ? JSON.parse(r.public_jwk) : r.public_jwk, 'public'),
          })),
        ),
      );
      cached.catch(() => {
        cached = null;
      });
    }
    return cached;
  };
}

/**
 * The instance actor's document: an Application with its keys and, as inbox, the shared one (it
 * receives nothing of its own).
 */
export async function instanceActorDocument(services: Services, ctx: Context<unknown>): Promise<Application> {
  const pairs = await ctx.getActorKeyPairs(INSTANCE_ACTOR);
  const publicUrl = services.config.publicUrl;
  return new Application({
    id: ctx.getActorUri(INSTANCE_ACTOR),
    preferredUsername: instanceActorUsername(services),
    name: instanceActorUsername(services),
    url: new URL(`${publicUrl}/about`),
    manuallyApprovesFollowers: true,
    inbox: ctx.getInboxUri(),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    publicKey: pairs[0]?.cryptographicKey ?? null,
    assertionMethods: pairs.map((p) => p.multikey),
  });
}
