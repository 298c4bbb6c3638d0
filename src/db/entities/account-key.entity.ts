import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { JsonWebKey } from 'node:crypto';

/** A local account's signing key pair (RSA for HTTP signatures, Ed25519 for object proofs). */
export const AccountKeySchema = defineEntity({
  name: 'AccountKey',
  tableName: 'account_keys',
  properties: {
    id: p.bigint('string').primary(),
    accountId: p.bigint('string'),
    algorithm: p.text(),
    publicJwk: p.json<JsonWebKey>(),
    privateJwk: p.json<JsonWebKey>(),
    createdAt: p.datetime(),
  },
});
export type AccountKey = InferEntity<typeof AccountKeySchema>;
