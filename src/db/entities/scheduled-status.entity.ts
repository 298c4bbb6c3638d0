import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A scheduled status (actors/scheduled-status): the author, the time, the parameters of the
 * status to post (Mastodon's `params`), and the state columns the actor store projects from the
 * snapshot (state, scheduledAt, statusId, failure).
 */
export const ScheduledStatusSchema = defineEntity({
  name: 'ScheduledStatus',
  tableName: 'scheduled_statuses',
  properties: {
    id: p.bigint('string').primary(),
    accountId: p.bigint('string'),
    applicationId: p.bigint('string').nullable(),
    scheduledAt: p.datetime(),
    params: p.json<Record<string, unknown>>(),
    idempotencyKey: p.text().nullable(),
    state: p.text().$type<'scheduled' | 'published' | 'cancelled' | 'failed'>(),
    statusId: p.bigint('string').nullable(),
    failure: p.text().nullable(),
    machine: p.json<Record<string, unknown>>().nullable(),
    machineVersion: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ScheduledStatus = InferEntity<typeof ScheduledStatusSchema>;
