import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const OAuthApplicationSchema = defineEntity({
  name: 'OAuthApplication',
  tableName: 'oauth_applications',
  properties: {
    id: p.bigint('string').primary(),
    name: p.text(),
    website: p.text().nullable(),
    redirectUris: p.array(),
    scopes: p.text(),
    clientId: p.text(),
    clientSecret: p.text(),
    ownerAccountId: p.bigint('string').nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type OAuthApplication = InferEntity<typeof OAuthApplicationSchema>;

export const OAuthAccessGrantSchema = defineEntity({
  name: 'OAuthAccessGrant',
  tableName: 'oauth_access_grants',
  properties: {
    id: p.bigint('string').primary(),
    applicationId: p.bigint('string'),
    userId: p.bigint('string'),
    codeHash: p.text(),
    redirectUri: p.text(),
    scopes: p.text(),
    codeChallenge: p.text().nullable(),
    codeChallengeMethod: p.text().nullable(),
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type OAuthAccessGrant = InferEntity<typeof OAuthAccessGrantSchema>;

export const OAuthAccessTokenSchema = defineEntity({
  name: 'OAuthAccessToken',
  tableName: 'oauth_access_tokens',
  properties: {
    id: p.bigint('string').primary(),
    applicationId: p.bigint('string').nullable(),
    userId: p.bigint('string').nullable(),
    tokenHash: p.text(),
    scopes: p.text(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type OAuthAccessToken = InferEntity<typeof OAuthAccessTokenSchema>;
