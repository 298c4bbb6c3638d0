import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * The follow actor of the pair (accountId → targetAccountId): its state (requested, accepted, or
 * an ended one: rejected, cancelled, undone, removed, blocked) and persisted snapshot.
 */
export const FollowSchema = defineEntity({
  name: 'Follow',
  tableName: 'follows',
  properties: {
    id: p.bigint('string').primary(),
    accountId: p.bigint('string'),
    targetAccountId: p.bigint('string'),
    uri: p.text().nullable(),
    state: p.text().$type<'idle' | 'requested' | 'accepted' | 'rejected' | 'cancelled' | 'undone' | 'removed' | 'blocked'>(),
    showReblogs: p.boolean().default(true),
    notify: p.boolean().default(false),
    languages: p.array().nullable(),
    machine: p.json<Record<string, unknown>>().nullable(),
    machineVersion: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Follow = InferEntity<typeof FollowSchema>;
