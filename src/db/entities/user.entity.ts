import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** The sign-in side of a local account. */
export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.bigint('string').primary(),
    accountId: p.bigint('string'),
    email: p.text(),
    encryptedPassword: p.text(),
    roleId: p.bigint('string').nullable(),
    confirmedAt: p.datetime().nullable(),
    approved: p.boolean().default(true),
    disabled: p.boolean().default(false),
    locale: p.text().nullable(),
    signUpReason: p.text().nullable(),
    currentSignInAt: p.datetime().nullable(),
    lastSignInAt: p.datetime().nullable(),
    settings: p.json<Record<string, unknown>>().default({} as never),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type User = InferEntity<typeof UserSchema>;
