/**
 * Account (and user, token) rows read with plain SQL, mapped to the entity shapes the serializers
 * take, without the ORM's per-row cost (identity map, change-set snapshots). For hot reads only:
 * a row read here is never flushed, and its actor snapshot is not loaded; writes load their
 * entity through the EntityManager.
 */
import type { Account, OAuthAccessToken, User } from '../../db/entities/index.ts';
import type { AccountsTable, OAuthAccessTokensTable, UsersTable } from '../../db/schema.ts';

/**
 * The accounts columns, aliased with `prefix` (ids as text, the drivers differ on bigint). The
 * actor snapshot (`machine`) and the public key are left out (read as null): rendering and
 * authentication never need them, and the snapshot is the widest column.
 */
export function accountColumns(alias: string, prefix = ''): string {
  const c = (col: string, cast = '') => `${alias}.${col}${cast} as ${prefix}${col}`;
  return [
    c('id', '::text'), c('username'), c('domain'), c('display_name'), c('note'), c('uri'), c('url'), c('inbox_url'),
    c('shared_inbox_url'), c('outbox_url'), c('followers_url'), c('following_url'), c('featured_url'), c('actor_type'),
    c('locked'), c('discoverable'), c('indexable'), c('hide_collections'), c('avatar_url'), c('header_url'), c('fields'),
    c('moved_to_account_id', '::text'), c('also_known_as'), c('silenced_at'), c('suspended_at'),
    c('machine_version'), c('fetched_at'), c('created_at'), c('updated_at'),
  ].join(', ');
}

export function userColumns(alias: string, prefix = ''): string {
  const c = (col: string, cast = '') => `${alias}.${col}${cast} as ${prefix}${col}`;
  return [
    c('id', '::text'), c('account_id', '::text'), c('email'), c('encrypted_password'), c('role_id', '::text'), c('confirmed_at'),
    c('approved'), c('disabled'), c('locale'), c('sign_up_reason'), c('current_sign_in_at'), c('last_sign_in_at'), c('settings'),
    c('created_at'), c('updated_at'),
  ].join(', ');
}

export function tokenColumns(alias: string, prefix = ''): string {
  const c = (col: string, cast = '') => `${alias}.${col}${cast} as ${prefix}${col}`;
  return [
    c('id', '::text'), c('application_id', '::text'), c('user_id', '::text'), c('token_hash'), c('scopes'), c('expires_at'),
    c('revoked_at'), c('last_used_at'), c('created_at'),
  ].join(', ');
}

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string));
const json = <T>(v: unknown, fallback: T): T => (v === null || v === undefined ? fallback : typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

/** A row selected with accountColumns(alias, prefix) → the Account shape. */
export function accountFromRow(row: Row, prefix = ''): Account {
  // Plain property reads: a key built on each read (`prefix + name`) is found the slow way, and
  // that cost 20 times the rest of this mapping (75 µs a page of 100 accounts against 4).
  const r = (prefix === '' ? row : unprefixed(row, prefix)) as Record<keyof AccountsTable, unknown>;
  return {
    id: r.id as string,
    username: r.username as string,
    domain: r.domain as string | null,
    displayName: r.display_name as string,
    note: r.note as string,
    uri: r.uri as string,
    url: r.url as string | null,
    inboxUrl: r.inbox_url as string | null,
    sharedInboxUrl: r.shared_inbox_url as string | null,
    outboxUrl: r.outbox_url as string | null,
    followersUrl: r.followers_url as string | null,
    followingUrl: r.following_url as string | null,
    featuredUrl: r.featured_url as string | null,
    actorType: r.actor_type as string,
    locked: r.locked as boolean,
    discoverable: r.discoverable as boolean | null,
    indexable: r.indexable as boolean,
    hideCollections: r.hide_collections as boolean | null,
    avatarUrl: r.avatar_url as string | null,
    headerUrl: r.header_url as string | null,
    fields: json(r.fields, [] as Account['fields']),
    publicKeyPem: (r.public_key_pem as string | undefined) ?? null,
    movedToAccountId: r.moved_to_account_id as string | null,
    alsoKnownAs: json(r.also_known_as, [] as string[]),
    silencedAt: date(r.silenced_at),
    suspendedAt: date(r.suspended_at),
    machine: json(r.machine, null),
    machineVersion: Number(r.machine_version ?? 0),
    fetchedAt: date(r.fetched_at),
    createdAt: date(r.created_at)!,
    updatedAt: date(r.updated_at)!,
  } as Account;
}

/** The row's `prefix`ed columns under their own names (authentication's row: cached, not per page). */
function unprefixed(row: Row, prefix: string): Row {
  const out: Row = {};
  for (const k in row) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = row[k];
  return out;
}

export function userFromRow(row: Row, prefix = ''): User {
  const r = (k: keyof UsersTable) => row[prefix + k];
  return {
    id: r('id') as string,
    accountId: r('account_id') as string,
    email: r('email') as string,
    encryptedPassword: r('encrypted_password') as string,
    roleId: r('role_id') as string | null,
    confirmedAt: date(r('confirmed_at')),
    approved: r('approved') as boolean,
    disabled: r('disabled') as boolean,
    locale: r('locale') as string | null,
    signUpReason: r('sign_up_reason') as string | null,
    currentSignInAt: date(r('current_sign_in_at')),
    lastSignInAt: date(r('last_sign_in_at')),
    settings: json(r('settings'), {} as Record<string, unknown>),
    createdAt: date(r('created_at'))!,
    updatedAt: date(r('updated_at'))!,
  } as User;
}

export function tokenFromRow(row: Row, prefix = ''): OAuthAccessToken {
  const r = (k: keyof OAuthAccessTokensTable) => row[prefix + k];
  return {
    id: r('id') as string,
    applicationId: r('application_id') as string | null,
    userId: r('user_id') as string | null,
    tokenHash: r('token_hash') as string,
    scopes: r('scopes') as string,
    expiresAt: date(r('expires_at')),
    revokedAt: date(r('revoked_at')),
    lastUsedAt: date(r('last_used_at')),
    createdAt: date(r('created_at'))!,
  } as OAuthAccessToken;
}
