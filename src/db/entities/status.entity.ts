import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** Mastodon's visibilities, plus the internal `limited` (shown as private in the API). */
export type StatusVisibility = 'public' | 'unlisted' | 'private' | 'direct' | 'limited';

/** A status (a post, or a reblog of one when reblogOfId is set). `text` is the source, `content` its HTML. */
export const StatusSchema = defineEntity({
  name: 'Status',
  tableName: 'statuses',
  properties: {
    id: p.bigint('string').primary(),
    accountId: p.bigint('string'),
    uri: p.text(),
    url: p.text().nullable(),
    text: p.text().default(''),
    content: p.text().default(''),
    spoilerText: p.text().default(''),
    visibility: p.text().$type<StatusVisibility>().default('public'),
    sensitive: p.boolean().default(false),
    language: p.text().nullable(),
    local: p.boolean(),
    inReplyToId: p.bigint('string').nullable(),
    inReplyToAccountId: p.bigint('string').nullable(),
    reblogOfId: p.bigint('string').nullable(),
    applicationId: p.bigint('string').nullable(),
    /** The thread (conversations.id): a reply's is its parent's; null for a reblog. */
    conversationId: p.bigint('string').nullable(),
    /** Who may quote it (Mastodon 4.5: public, followers, nobody); null: a remote status whose server said nothing. */
    quotePolicy: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    editedAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
  },
});
export type Status = InferEntity<typeof StatusSchema>;

/** A status's counters (Mastodon's status_stats): no row means zero of everything. */
export const StatusStatsSchema = defineEntity({
  name: 'StatusStats',
  tableName: 'status_stats',
  properties: {
    statusId: p.bigint('string').primary(),
    repliesCount: p.integer().default(0),
    reblogsCount: p.integer().default(0),
    favouritesCount: p.integer().default(0),
    /** What a remote status's server says (its Note's likes/shares totalItems), clamped; null if unsaid. */
    untrustedFavouritesCount: p.integer().nullable(),
    untrustedReblogsCount: p.integer().nullable(),
    /** Its accepted quotes (Mastodon 4.5's quotes_count). */
    quotesCount: p.integer().default(0),
  },
});
export type StatusStats = InferEntity<typeof StatusStatsSchema>;
