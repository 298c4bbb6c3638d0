import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * An account, local (domain null) or remote. Ids are time-sortable 64-bit integers kept as
 * strings in JS, exactly as Mastodon serialises them.
 */
export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.bigint('string').primary(),
    username: p.text(),
    domain: p.text().nullable(),
    displayName: p.text().default(''),
    note: p.text().default(''),
    uri: p.text(),
    url: p.text().nullable(),
    inboxUrl: p.text().nullable(),
    sharedInboxUrl: p.text().nullable(),
    outboxUrl: p.text().nullable(),
    followersUrl: p.text().nullable(),
    followingUrl: p.text().nullable(),
    featuredUrl: p.text().nullable(),
    actorType: p.text().default('Person'),
    locked: p.boolean().default(false),
    discoverable: p.boolean().nullable(),
    indexable: p.boolean().default(false),
    hideCollections: p.boolean().nullable(),
    avatarUrl: p.text().nullable(),
    headerUrl: p.text().nullable(),
    fields: p.json<{ name: string; value: string; verified_at: string | null }[]>().default([] as never),
    publicKeyPem: p.text().nullable(),
    movedToAccountId: p.bigint('string').nullable(),
    alsoKnownAs: p.json<string[]>().default([] as never),
    silencedAt: p.datetime().nullable(),
    suspendedAt: p.datetime().nullable(),
    machine: p.json<Record<string, unknown>>().nullable(),
    machineVersion: p.integer().default(0),
    fetchedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Account = InferEntity<typeof AccountSchema>;
