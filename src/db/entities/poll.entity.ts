import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * The poll actor of a status (actors/poll): its options and settings, the state columns the
 * actor store projects from the snapshot (state, cachedTallies, votesCount, votersCount,
 * closedAt), and the snapshot. Votes are rows of poll_votes.
 */
export const PollSchema = defineEntity({
  name: 'Poll',
  tableName: 'polls',
  properties: {
    id: p.bigint('string').primary(),
    statusId: p.bigint('string'),
    accountId: p.bigint('string'),
    local: p.boolean(),
    uri: p.text().nullable(),
    options: p.array(),
    multiple: p.boolean().default(false),
    hideTotals: p.boolean().default(false),
    expiresAt: p.datetime().nullable(),
    state: p.text().$type<'open' | 'closed' | 'deleted'>(),
    cachedTallies: p.json<number[]>(),
    votesCount: p.integer().default(0),
    votersCount: p.integer().nullable().default(0),
    closedAt: p.datetime().nullable(),
    machine: p.json<Record<string, unknown>>().nullable(),
    machineVersion: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Poll = InferEntity<typeof PollSchema>;
