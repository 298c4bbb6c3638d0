/**
 * The signed-in user's own profile: what verify_credentials shows (loaded for the credential
 * serializer), and its edits (update_credentials, DELETE /api/v1/profile/avatar|header).
 *
 * An edit is validated as a whole first (one 422 lists every problem, nothing changes). Then the
 * lock goes through the account actor (relationships.setAccountLocked: unlocking accepts the
 * pending follow requests the follow actors allow, in its transaction), and everything else is
 * written in one transaction that also queues an Update(Person) for remote followers and, when
 * the fields changed, their rel="me" verification.
 */
import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { parseAcct } from '../lib/acct.ts';
import { LockMode } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import type { InstanceLimits } from '../../config/index.ts';
import { AccountSchema, UserSchema, type Account } from '../db/entities/index.ts';
import { Validation } from '../lib/errors.ts';
import { uploadBytes, uploadSize, type Upload } from '../lib/upload.ts';
import { isSupportedLanguage } from '../lib/languages.ts';
import { QUOTE_POLICIES } from '../serializers/preferences.ts';
import { countedLength } from '../lib/text-format.ts';
import { recordEvent } from './actor-store.ts';
import { sqlFromEm } from '../db/sql.ts';
import {
  ImageRejected,
  deleteAccountImage,
  newAccountImageLocation,
  processAccountImage,
  sniffImage,
  writeAccountImage,
  type ProcessedImage,
} from './media-store.ts';
import { setAccountLocked } from './relationships.ts';
import { enqueueLinkVerification, verifiableUrl } from './link-verification.ts';

/** Default post visibilities a user may choose (Mastodon: not `direct`). */
export const DEFAULT_VISIBILITIES = ['public', 'unlisted', 'private'] as const;
export { FOLLOW_REQUESTS_COUNT_CAP } from './reads/credentials.ts';

export interface ProfileUpdate {
  displayName?: string;
  note?: string;
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  indexable?: boolean;
  hideCollections?: boolean;
  fields?: { name: string; value: string }[];
  source?: { privacy?: string; sensitive?: boolean; language?: string | null; quotePolicy?: string };
  /** Images: read only once their size passed. */
  avatar?: Upload;
  header?: Upload;
}

const chars = (s: string) => [...s].length;

/** Everything the CredentialAccount serializer needs: a read module (reads/credentials.ts). */
export { loadCredentialAccount, type CredentialData } from './reads/credentials.ts';

/** The checks of an edit, all at once. Returns the fields as they will be stored (blank pairs dropped, trimmed). */
function validateProfileUpdate(input: ProfileUpdate, limits: InstanceLimits['accounts']): { name: string; value: string }[] | undefined {
  const MAX_DISPLAY_NAME = limits.maxDisplayNameLength;
  const MAX_NOTE = limits.maxNoteLength;
  const MAX_PROFILE_FIELDS = limits.maxProfileFields;
  const v = new Validation();
  if (input.displayName !== undefined && chars(input.displayName) > MAX_DISPLAY_NAME) {
    v.add('display_name', 'ERR_TOO_LONG', `is too long (maximum is ${MAX_DISPLAY_NAME} characters)`);
  }
  if (input.note !== undefined && countedLength(input.note) > MAX_NOTE) v.add('note', 'ERR_TOO_LONG', `is too long (maximum is ${MAX_NOTE} characters)`);
  const fields = input.fields
    ?.map((f) => ({ name: f.name.trim(), value: f.value.trim() }))
    .filter((f) => f.name !== '' || f.value !== '');
  if (fields) {
    if (fields.length > MAX_PROFILE_FIELDS) v.add('fields', 'ERR_TOO_LONG', `is too long (maximum is ${MAX_PROFILE_FIELDS} fields)`);
    if (fields.some((f) => chars(f.name) > limits.profileFieldNameLimit || chars(f.value) > limits.profileFieldValueLimit)) {
      v.add('fields', 'ERR_TOO_LONG', `names and values are limited to ${limits.profileFieldNameLimit} characters`);
    }
    if (fields.some((f) => f.name === '' && f.value !== '')) v.add('fields', 'ERR_FIELDS_WITH_VALUES_MISSING_LABELS', 'contains values with missing labels');
  }
  const privacy = input.source?.privacy;
  if (privacy !== undefined && !(DEFAULT_VISIBILITIES as readonly string[]).includes(privacy)) {
    v.add('source.privacy', 'ERR_INCLUSION', 'is not included in the list');
  }
  const quotePolicy = input.source?.quotePolicy;
  if (quotePolicy !== undefined && !QUOTE_POLICIES.includes(quotePolicy)) v.add('source.quote_policy', 'ERR_INCLUSION', 'is not included in the list');
  const language = input.source?.language;
  if (language && !isSupportedLanguage(language)) v.add('source.language', 'ERR_INCLUSION', 'is not included in the list');
  for (const [key, data] of [['avatar', input.avatar], ['header', input.header]] as const) {
    if (!data) continue;
    if (uploadSize(data) > limits.profileImageSizeLimit) v.add(key, 'ERR_LESS_THAN', `must be less than ${Math.round(limits.profileImageSizeLimit / 1024 / 1024)} MB`);
    else if (!(data instanceof Uint8Array) || !sniffImage(data)) v.add(key, 'ERR_INVALID', 'must be a PNG, JPEG, GIF or WebP image');
  }
  v.throwIfInvalid();
  return fields;
}

/** Decode and re-encode the uploads (bounded pixels, no metadata); one 422 names each refused image. */
async function processImages(services: Services, input: ProfileUpdate): Promise<{ avatar?: ProcessedImage; header?: ProcessedImage }> {
  const maxPixels = services.config.bodyLimits.maxImagePixels;
  const v = new Validation();
  const out: { avatar?: ProcessedImage; header?: ProcessedImage } = {};
  for (const key of ['avatar', 'header'] as const) {
    const data = input[key];
    if (!data) continue;
    try {
      out[key] = await processAccountImage(key === 'avatar' ? 'avatars' : 'headers', await uploadBytes(data), maxPixels);
    } catch (err) {
      if (!(err instanceof ImageRejected)) throw err;
      if (err.reason === 'too_many_pixels') v.add(key, 'ERR_TOO_BIG', `dimensions must not exceed ${maxPixels} pixels`);
      else v.add(key, 'ERR_INVALID', 'must be a PNG, JPEG, GIF or WebP image');
    }
  }
  v.throwIfInvalid();
  return out;
}

/** Queues the Update(Person) to remote followers (one pending per account: it reads the profile when it runs). */
async function queueProfileUpdate(services: Services, tx: Parameters<typeof sqlFromEm>[0], accountId: string): Promise<void> {
  await recordEvent(services, sqlFromEm(tx), {
    actorKind: 'account',
    actorId: accountId,
    origin: 'client',
    event: { type: 'account.updated', accountId },
    dedupeKey: `account.updated:${accountId}`,
  });
}

export async function updateProfile(services: Services, accountId: string, userId: string, input: ProfileUpdate): Promise<void> {
  // The images' bytes, when within the size limit (a larger one is refused unread).
  const limit = services.config.limits.accounts.profileImageSizeLimit;
  const read = async (u: Upload | undefined) => (u === undefined || uploadSize(u) > limit ? u : await uploadBytes(u));
  input = { ...input, avatar: await read(input.avatar), header: await read(input.header) };
  const fields = validateProfileUpdate(input, services.config.limits.accounts);
  const images = await processImages(services, input);

  // Image files are written inside the transaction, under the row lock, and removed again if it
  // fails; the files they replace are removed only once it committed. So no edit, failed or
  // concurrent, leaves a file no row points at, or a row pointing at no file.
  const written: string[] = [];
  const replaced: { kind: 'avatars' | 'headers'; url: string | null }[] = [];
  try {
    // One transaction for the whole edit: the lock (a step of the account actor, and an unlock a
    // step of every pending follow) commits with the rest or not at all.
    await services.db.em().transactional(async (tx) => {
      replaced.length = 0;
      if (input.locked !== undefined) await setAccountLocked(services, accountId, input.locked, { em: tx, origin: 'client' });
      // The row lock serialises edits of one profile, so image files and rows agree.
      const account = await tx.findOneOrFail(AccountSchema, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const user = await tx.findOneOrFail(UserSchema, { id: userId });
      if (input.displayName !== undefined) account.displayName = input.displayName;
      if (input.note !== undefined) account.note = input.note;
      if (input.bot !== undefined) account.actorType = input.bot ? 'Service' : 'Person';
      if (input.discoverable !== undefined) account.discoverable = input.discoverable;
      if (input.indexable !== undefined) account.indexable = input.indexable;
      if (input.hideCollections !== undefined) account.hideCollections = input.hideCollections;
      let verify = false;
      if (fields) {
        // A value that was verified before keeps its verification (Mastodon's fields_attributes=).
        const before = account.fields;
        account.fields = fields.map((f) => ({ ...f, verified_at: before.find((b) => b.value === f.value && b.verified_at)?.verified_at ?? null }));
        verify = account.fields.some((f) => !f.verified_at && verifiableUrl(f.value) !== null);
      }
      for (const [key, kind] of [['avatar', 'avatars'], ['header', 'headers']] as const) {
        const image = images[key];
        if (!image) continue;
        const { url, file } = newAccountImageLocation(services, kind, accountId, image.ext);
        written.push(file);
        await writeAccountImage(file, image.data);
        replaced.push({ kind, url: (key === 'avatar' ? account.avatarUrl : account.headerUrl) ?? null });
        if (key === 'avatar') account.avatarUrl = url;
        else account.headerUrl = url;
      }
      const settings = { ...(user.settings as Record<string, unknown>) };
      const source = input.source ?? {};
      if (source.privacy !== undefined) settings['posting:default:visibility'] = source.privacy;
      if (source.sensitive !== undefined) settings['posting:default:sensitive'] = source.sensitive;
      if (source.language !== undefined) settings['posting:default:language'] = source.language || null;
      if (source.quotePolicy !== undefined) settings['posting:default:quote_policy'] = source.quotePolicy;
      user.settings = settings;
      user.updatedAt = services.clock.now();
      account.updatedAt = services.clock.now();
      await tx.flush();
      await queueProfileUpdate(services, tx, accountId);
      if (verify) await enqueueLinkVerification(sqlFromEm(tx), accountId, services.clock);
    });
  } catch (err) {
    for (const f of written) {
      await rm(f, { force: true }).catch(() => undefined);
      await rmdir(path.dirname(f)).catch(() => undefined); // only when nothing else is in it
    }
    throw err;
  }
  for (const r of replaced) await deleteAccountImage(services, r.kind, accountId, r.url).catch(() => undefined);
}

/** DELETE /api/v1/profile/avatar|header: back to the default image (a no-op when there is none). */
export async function removeProfileImage(services: Services, accountId: string, kind: 'avatar' | 'header'): Promise<void> {
  let removed: string | null = null;
  await services.db.em().transactional(async (tx) => {
    removed = null;
    const account = await tx.findOneOrFail(AccountSchema, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const current = kind === 'avatar' ? account.avatarUrl : account.headerUrl;
    if (current === null) return;
    if (kind === 'avatar') account.avatarUrl = null;
    else account.headerUrl = null;
    account.updatedAt = services.clock.now();
    await tx.flush();
    await queueProfileUpdate(services, tx, accountId);
    removed = current ?? null;
  });
  // The file goes once the row no longer points at it.
  await deleteAccountImage(services, kind === 'avatar' ? 'avatars' : 'headers', accountId, removed).catch(() => undefined);
}

// --- viewing profiles -----------------------------------------------------------------------

const escLike = (x: string) => x.replace(/[\\%_]/g, '\\$&');
/** An id that fits a bigint column (anything else names no account). */
const isId = (id: string) => /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n;

/**
 * Whether others may see an account: every remote one, and local ones whose sign-up was approved
 * (a pending sign-up is nobody's business yet). Suspended accounts are shown, as Mastodon does
 * since 3.3: the serializer blanks them and says `suspended: true`.
 */
async function visible(services: Services, account: Account | null): Promise<Account | null> {
  if (!account) return null;
  if (account.domain !== null) return account;
  const [user] = await services.db.sql.query<{ approved: boolean }>(`select approved from users where account_id = $1`, [account.id]);
  return user && !user.approved ? null : account;
}

/** GET /api/v1/accounts/lookup: a known account by `user`, `@user`, `user@domain` (this domain means local). No fetching. */
export async function lookupProfile(services: Services, acct: string): Promise<Account | null> {
  const handle = parseAcct(acct, services.config.domain);
  if (!handle) return null;
  const account = await services.db.em().findOne(AccountSchema, {
    username: { $ilike: escLike(handle.username) },
    domain: handle.domain === null ? null : { $ilike: escLike(handle.domain) },
  });
  return visible(services, account);
}

export interface ProfileSearch {
  q: string;
  limit: number;
  offset: number;
  /** Only accounts the viewer follows. */
  following: boolean;
}

/**
 * GET /api/v1/accounts/search: prefix match on username or display name over known accounts (not
 * suspended, not pending), local ones first, an exact username before the rest. `q` may be
 * `user@domain`, matching the domain by prefix too.
 */
export async function searchProfiles(services: Services, viewerId: string, search: ProfileSearch): Promise<Account[]> {
  const q = search.q.trim().replace(/^@/, '');
  if (!q) return [];
  const [user, domain] = q.split('@');
  if (!user) return [];
  const local = domain !== undefined && domain.toLowerCase() === services.config.domain.toLowerCase();
  const rows = await services.db.sql.query<{ id: string }>(
    `select a.id::text from accounts a
      where a.suspended_at is null
        and (a.username ilike $1 or a.display_name ilike $1)
        and ($2::text is null or a.domain ilike $2)
        and (not $3::boolean or a.domain is null)
        and not exists (select 1 from users u where u.account_id = a.id and not u.approved)
        and (not $4::boolean or exists (select 1 from follows f where f.account_id = $5 and f.target_account_id = a.id and f.state = 'accepted'))
      order by (a.domain is null) desc, lower(a.username) = lower($6) desc, a.id
      limit $7 offset $8`,
    [`${escLike(user)}%`, domain && !local ? `${escLike(domain)}%` : null, local, search.following, viewerId, user, search.limit, search.offset],
  );
  const accounts = await services.db.em().find(AccountSchema, { id: { $in: rows.map((r) => r.id) } });
  const byId = new Map(accounts.map((a) => [a.id, a]));
  return rows.map((r) => byId.get(r.id)).filter((a): a is Account => a !== undefined);
}
