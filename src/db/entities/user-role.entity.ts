import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A customisable role: a name, a colour, a permission bitmask and a position (higher outranks lower). */
export const UserRoleSchema = defineEntity({
  name: 'UserRole',
  tableName: 'user_roles',
  properties: {
    id: p.bigint('string').primary(),
    name: p.text(),
    color: p.text().default(''),
    permissions: p.bigint('string').default('0'),
    position: p.integer().default(0),
    highlighted: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type UserRole = InferEntity<typeof UserRoleSchema>;

/** Mastodon's permission bits (UserRole::FLAGS). */
export const PERMISSIONS = {
  administrator: 1n << 0n,
  devops: 1n << 1n,
  viewAuditLog: 1n << 2n,
  viewDashboard: 1n << 3n,
  manageReports: 1n << 4n,
  manageFederation: 1n << 5n,
  manageSettings: 1n << 6n,
  manageBlocks: 1n << 7n,
  manageTaxonomies: 1n << 8n,
  manageAppeals: 1n << 9n,
  manageUsers: 1n << 10n,
  manageInvites: 1n << 11n,
  manageRules: 1n << 12n,
  manageAnnouncements: 1n << 13n,
  manageCustomEmojis: 1n << 14n,
  manageWebhooks: 1n << 15n,
  inviteUsers: 1n << 16n,
  manageRoles: 1n << 17n,
  manageUserAccess: 1n << 18n,
  deleteUserData: 1n << 19n,
  viewFeeds: 1n << 20n,
} as const;
