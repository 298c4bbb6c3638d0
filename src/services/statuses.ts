/**
 * Statuses written by local users: create, delete, favourite, reblog, bookmark, pin. Each use case
 * is one transaction that writes the rows, the counters (status_stats, account_stats) and, for the
 * facts others may need to hear of, one outbox event with origin 'client' (`status.created`,
 * `status.deleted`, `status.favourited`, `status.unfavourited`, `status.reblogged`,
 * `status.unreblogged`) for effects to federate later. Nothing here emits ActivityPub. A status's
 * and a reblog's rows are written by services/status-writer.ts (the writer of remote statuses and
 * edits too); what is local stays here: the text formatting, the checks, the Idempotency-Key.
 * Media attachments are checked and released through services/media.ts, in the same transactions.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import type { Account, User } from '../db/entities/index.ts';
import type { StatusVisibility } from '../db/entities/status.entity.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import { extractEntities, extractUrls, formatPlainText, handleKey, mentionedHandles, type MentionTarget } from '../lib/text-format.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { findVisibleStatus, type StatusFacts } from './reads/statuses.ts';
import { mediaForNewStatus, releaseStatusMedia, removeStoredFiles } from './media.ts';
import { deletePollOfStatus, validatePoll, type PollParams } from './polls.ts';
import { resolveRemoteHandles } from './remote-mentions.ts';
import { bumpStatusStats, discardStatus, insertReblog, insertStatus } from './status-writer.ts';
import { localQuote, newStatusPolicy, quotableStatus, withQuoteFallback, type QuotedStatus } from './quotes.ts';
import type { QuotePolicy } from '../lib/quote-policy.ts';

const VISIBILITIES = ['public', 'unlisted', 'private', 'direct'] as const;
type ApiVisibility = (typeof VISIBILITIES)[number];

/** How long an Idempotency-Key names the status it created (Mastodon: one hour). */
export const IDEMPOTENCY_TTL_MS = 60 * 60 * 1000;
const MAX_IDEMPOTENCY_KEY = 255;
const MAX_LANGUAGE = 16;

export interface StatusAuthor {
  account: Account;
  user: User;
  /** The OAuth application of the token that posts (null: none). */
  applicationId: string | null;
}

export interface CreateStatusInput {
  status?: string;
  spoilerText?: string;
  sensitive?: boolean;
  visibility?: string;
  language?: string | null;
  inReplyToId?: string | null;
  mediaIds?: string[];
  /** A poll (Mastodon's poll[options][], poll[expires_in], poll[multiple], poll[hide_totals]). */
  poll?: PollParams | null;
  idempotencyKey?: string | null;
  /** The status quoted (Mastodon 4.5's quoted_status_id). */
  quotedStatusId?: string | null;
  /** Who may quote this one (public, followers, nobody; default: the author's setting). */
  quoteApprovalPolicy?: string;
}

/** Mastodon's length of a status: every URL counts as `perUrl` characters, remote mentions by their username. */
export function statusLength(text: string, perUrl: number): number {
  let n = 0;
  for (const part of extractUrls(text)) {
    if (part.url) {
      n += perUrl;
      continue;
    }
    for (const e of extractEntities(part.text)) {
      n += e.kind === 'mention' ? [...`@${e.username}`].length : [...e.text].length;
    }
  }
  return n;
}

/** The language a status takes when its author gives none: the posting:default:language setting, else the user's locale's language. */
function defaultPostingLanguage(settings: unknown, locale: string | null | undefined): string | null {
  const chosen = (settings as Record<string, unknown> | null)?.['posting:default:language'];
  if (typeof chosen === 'string' && chosen) return chosen;
  const m = locale ? /^([a-z]{2,3})(?:[-_]|$)/.exec(locale) : null;
  return m ? m[1]! : null;
}

/** The user's default visibility: as chosen in posting:default:visibility, else private when locked, else public. */
function defaultVisibility(account: Account, user: User): ApiVisibility {
  const chosen = (user.settings as Record<string, unknown>)['posting:default:visibility'];
  if (typeof chosen === 'string' && (VISIBILITIES as readonly string[]).includes(chosen)) return chosen as ApiVisibility;
  return account.locked ? 'private' : 'public';
}

function statusUri(account: Account, id: string): string {
  return `${account.uri}/statuses/${id}`;
}

function statusUrl(services: Services, account: Account, id: string): string {
  return `${services.config.publicUrl}/@${account.username}/${id}`;
}

/** Mentioned accounts by handle key (handleKey), as the status text names them. */
export type MentionTargets = Map<string, MentionTarget & { id: string }>;

/**
 * A local status's text rendered as Mastodon does: mentions link to the accounts they name (one
 * lookup; a remote handle Roost has never seen is resolved first, bounded, by
 * services/remote-mentions.ts; what stays unknown stays text), hashtags become tags (distinct, as
 * first written). Shared by create and edit, and called before their transaction: the resolution
 * is network work.
 */
export async function formatStatusText(services: Services, text: string): Promise<{ content: string; targets: MentionTargets; tags: string[] }> {
  const handles = mentionedHandles(text, services.config.domain);
  const targets: MentionTargets = new Map();
  if (handles.length) {
    type Row = { id: string; username: string; domain: string | null; url: string | null; uri: string; suspended: boolean };
    const rows = await services.db.sql.query<Row>(
      `select a.id::text, a.username, a.domain, a.url, a.uri, a.suspended_at is not null as suspended from accounts a
         join unnest($1::text[], $2::text[]) as h(username, domain)
           on lower(a.username) = lower(h.username) and coalesce(lower(a.domain), '') = lower(h.domain)`,
      [handles.map((h) => h.username), handles.map((h) => h.domain ?? '')],
    );
    const known = new Set(rows.map((r) => handleKey(r.username, r.domain)));
    for (const r of rows) if (!r.suspended) targets.set(handleKey(r.username, r.domain), { id: r.id, username: r.username, domain: r.domain, url: r.url ?? r.uri });
    // Remote handles with no account at all (a suspended one is known, and stays text), in text order.
    const unknown = handles.filter((h): h is { username: string; domain: string } => h.domain !== null && !known.has(handleKey(h.username, h.domain)));
    const ids = await resolveRemoteHandles(services, unknown);
    const found = [...new Set(ids.filter((id): id is string => id !== null))];
    if (found.length) {
      const resolved = await services.db.sql.query<Row>(
        `select id::text, username, domain, url, uri, false as suspended from accounts where id = any($1::bigint[]) and suspended_at is null`,
        [found],
      );
      const byId = new Map(resolved.map((r) => [r.id, r]));
      unknown.forEach((h, i) => {
        const r = ids[i] ? byId.get(ids[i]!) : undefined;
        // Under the handle as written: WebFinger may name an account on another host (its actor's).
        if (r) targets.set(handleKey(h.username, h.domain), { id: r.id, username: r.username, domain: r.domain, url: r.url ?? r.uri });
      });
    }
  }
  const content = formatPlainText(text, {
    baseUrl: services.config.publicUrl,
    localDomain: services.config.domain,
    resolveMention: (username, domain) => targets.get(handleKey(username, domain)),
  });
  // Distinct in any case, each as first written (a Map built from pairs would keep the last spelling).
  const firstSpelling = new Map<string, string>();
  for (const e of extractEntities(text)) if (e.kind === 'hashtag' && !firstSpelling.has(e.tag.toLowerCase())) firstSpelling.set(e.tag.toLowerCase(), e.tag);
  const tags = [...firstSpelling.values()];
  return { content, targets, tags };
}

/** The text's length checks and language code, as create and edit validate them (into `v`). */
export function validateStatusText(
  services: Services,
  v: Validation,
  text: string,
  spoilerText: string,
  language: string | null,
  opts: { allowBlank?: boolean } = {},
): void {
  const limits = services.config.limits.statuses;
  if (!text.trim() && !opts.allowBlank) v.add('text', 'ERR_BLANK', "can't be blank");
  if (statusLength(text, limits.charactersReservedPerUrl) + [...spoilerText].length > limits.maxCharacters) {
    v.add('text', 'ERR_TOO_LONG', `character limit of ${limits.maxCharacters} exceeded`);
  }
  if (language && (language.length > MAX_LANGUAGE || !/^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{1,8})*$/.test(language))) {
    v.add('language', 'ERR_INVALID', 'is not a valid language code');
  }
}

/** A new status' input as checked by `checkNewStatus`: what createStatus writes. */
export interface CheckedStatus {
  text: string;
  spoilerText: string;
  /** Non-blank ids, as sent (checked against the rows in the writing transaction). */
  mediaIds: string[];
  /** The poll's options, trimmed (null: no poll). */
  pollOptions: string[] | null;
  visibility: ApiVisibility;
  language: string | null;
  parent: StatusFacts | null;
  /** The status quoted, checked (null: none). */
  quoted: QuotedStatus | null;
  quotePolicy: QuotePolicy;
}

/**
 * Checks a new status as createStatus does before it writes (Mastodon's PostStatusService
 * validations: media count, text, poll, visibility, language, the post replied to), throwing its
 * 422s and 404. Scheduling a status (services/scheduled-statuses.ts) runs the same checks.
 */
export async function checkNewStatus(services: Services, author: StatusAuthor, input: CreateStatusInput): Promise<CheckedStatus> {
  const { account, user } = author;
  const limits = services.config.limits.statuses;
  const text = (input.status ?? '').replace(/\r\n?/g, '\n');
  const spoilerText = (input.spoilerText ?? '').trim();

  // As Mastodon's PostStatusService#validate_media!: the count first; the ids in the transaction.
  const mediaIds = (input.mediaIds ?? []).filter((m) => m.trim() !== '');
  // Media and a poll do not go together: Mastodon answers with the same message.
  if (mediaIds.length > limits.maxMediaAttachments || (input.poll && mediaIds.length > 0)) {
    throw new RoostError(422, `Cannot attach more than ${limits.maxMediaAttachments} files`);
  }

  const v = new Validation();
  // A status with media may have no text (Mastodon's `unless: -> { with_media? }`).
  if (!text.trim() && mediaIds.length === 0) v.add('text', 'ERR_BLANK', "can't be blank");
  const pollOptions = input.poll ? validatePoll(services, input.poll, v) : null;
  if (statusLength(text, limits.charactersReservedPerUrl) + [...spoilerText].length > limits.maxCharacters) {
    v.add('text', 'ERR_TOO_LONG', `character limit of ${limits.maxCharacters} exceeded`);
  }
  // The settings afresh: the viewer's user row may be a few seconds old (reads/viewer.ts).
  const [fresh] = await services.db.sql.query<{ settings: Record<string, unknown> | null; locale: string | null }>(`select settings, locale from users where id = $1`, [user.id]);
  let visibility: ApiVisibility = defaultVisibility(account, { ...user, settings: fresh?.settings ?? user.settings } as User);
  if (input.visibility !== undefined && input.visibility !== '') {
    if (!(VISIBILITIES as readonly string[]).includes(input.visibility)) v.add('visibility', 'ERR_INCLUSION', 'is not included in the list');
    else visibility = input.visibility as ApiVisibility;
  }
  // No language given: the author's default posting language, else the language of their locale
  // (Mastodon's preferred_posting_language cascade), else none.
  const language = input.language?.trim() || defaultPostingLanguage(fresh?.settings ?? user.settings, fresh ? fresh.locale : user.locale);
  if (language && (language.length > MAX_LANGUAGE || !/^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{1,8})*$/.test(language))) {
    v.add('language', 'ERR_INVALID', 'is not a valid language code');
  }
  const quotePolicy = newStatusPolicy(v, input.quoteApprovalPolicy, fresh?.settings ?? user.settings, visibility);
  v.throwIfInvalid();

  let parent: StatusFacts | null = null;
  if (input.inReplyToId) {
    parent = await findVisibleStatus(services, input.inReplyToId, account.id);
    // As Mastodon: a reply to a status the author may not see is a reply to nothing there.
    if (!parent || parent.reblogOfId) throw new RoostError(404, 'The post you are trying to reply to does not appear to exist.');
  }
  let quoted: QuotedStatus | null = null;
  if (input.quotedStatusId) {
    quoted = await quotableStatus(services, account.id, input.quotedStatusId);
    // As Mastodon: quoting a followers-only post makes a followers-only quote.
    if (quoted.visibility === 'private' && (visibility === 'public' || visibility === 'unlisted')) visibility = 'private';
  }
  return { text, spoilerText, mediaIds, pollOptions, visibility, language, parent, quoted, quotePolicy: quoted?.visibility === 'private' ? 'nobody' : quotePolicy };
}

export interface CreateStatusOptions {
  /** Who causes it (default `client`; a scheduled status' publication: `timer`). */
  origin?: Origin;
  /** Attachments reserved by this scheduled status may be attached (its publication). */
  reservedFor?: string | null;
  /**
   * Runs in the status' transaction once its rows are written (a scheduled status steps its actor
   * there, so the status and the step commit together or not at all).
   */
  inTransaction?: (em: EntityManager, statusId: string) => Promise<void>;
}

/** Creates a status and returns its id (for the same Idempotency-Key within an hour: the status it created then). */
export async function createStatus(services: Services, author: StatusAuthor, input: CreateStatusInput, opts: CreateStatusOptions = {}): Promise<string> {
  const { account } = author;
  const limits = services.config.limits.statuses;
  const origin = opts.origin ?? 'client';
  const key = input.idempotencyKey ? input.idempotencyKey.slice(0, MAX_IDEMPOTENCY_KEY) : null;
  const now = services.clock.now();
  if (key) {
    const [known] = await services.db.sql.query<{ status_id: string }>(
      `select k.status_id::text from status_idempotency_keys k join statuses s on s.id = k.status_id
        where k.account_id = $1 and k.key = $2 and k.created_at > $3 and s.deleted_at is null`,
      [account.id, key, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)],
    );
    if (known) return known.status_id;
  }
  const { text, spoilerText, mediaIds, pollOptions, visibility, language, parent, quoted, quotePolicy } = await checkNewStatus(services, author, input);

  const formatted = await formatStatusText(services, text);
  const { targets, tags } = formatted;
  // As Mastodon: a private mention may quote only an account it mentions.
  if (quoted && visibility === 'direct' && quoted.accountId !== account.id && ![...targets.values()].some((t) => t.id === quoted.accountId)) {
    throw new RoostError(422, 'Validation failed: Quoted status cannot be quoted in a private mention that does not mention its author', {
      details: { quoted_status_id: [{ error: 'ERR_INVALID', description: 'cannot be quoted in a private mention that does not mention its author' }] },
    });
  }
  const content = quoted ? withQuoteFallback(formatted.content, text, quoted) : formatted.content;

  const id = services.ids.next();
  // An entity manager's transaction: the actor store can step an actor in it (opts.inTransaction).
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    if (key) {
      // Two requests with one key at once: the second waits for the first's row, then finds it.
      const taken = await sql.query<{ status_id: string }>(
        `insert into status_idempotency_keys (account_id, key, status_id, created_at) values ($1, $2, $3, $4)
         on conflict (account_id, key) do update set status_id = excluded.status_id, created_at = excluded.created_at
           where status_idempotency_keys.created_at <= $5
         returning status_id::text`,
        [account.id, key, id, now, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)],
      );
      if (taken.length === 0) {
        const [known] = await sql.query<{ status_id: string }>(`select status_id::text from status_idempotency_keys where account_id = $1 and key = $2`, [account.id, key]);
        return known!.status_id;
      }
    }
    // The author's own unattached, processed attachments, locked until they are attached below.
    const media = await mediaForNewStatus(sql, account.id, mediaIds, limits.maxMediaAttachments, opts.reservedFor ?? null);
    await insertStatus(services, sql, {
      id,
      accountId: account.id,
      local: true,
      uri: statusUri(account, id),
      url: statusUrl(services, account, id),
      text,
      content,
      spoilerText,
      visibility,
      // As Mastodon: a content warning makes the status sensitive.
      sensitive: (input.sensitive ?? false) || spoilerText !== '',
      language,
      parent: parent ? { id: parent.id, accountId: parent.accountId } : null,
      applicationId: author.applicationId,
      createdAt: now,
      editedAt: null,
      mentions: [...targets.values()].map((t) => ({ accountId: t.id, silent: false })),
      tags,
      media: { attach: media },
      poll: input.poll && pollOptions
        ? {
            options: pollOptions,
            multiple: input.poll.multiple ?? false,
            hideTotals: input.poll.hideTotals ?? false,
            expiresAt: new Date(now.getTime() + input.poll.expiresIn * 1000),
          }
        : null,
      quotePolicy,
      quote: quoted ? localQuote(quoted) : null,
    }, now, { origin, beforeFact: opts.inTransaction ? (statusId) => opts.inTransaction!(em, statusId) : undefined });
    return id;
  });
}

/** A status of the viewer's own (not a reblog, not deleted), or 404. */
async function ownStatus(sql: Sql, accountId: string, id: string): Promise<{ id: string; createdAt: Date; inReplyToId: string | null; visibility: string; reblogOfId: string | null }> {
  const [row] = await sql.query<{ id: string; created_at: string; in_reply_to_id: string | null; visibility: string; reblog_of_id: string | null }>(
    `select id::text, created_at, in_reply_to_id::text, visibility, reblog_of_id::text from statuses
      where id = $1 and account_id = $2 and deleted_at is null for update`,
    [id, accountId],
  );
  if (!row) throw notFound();
  return { id: row.id, createdAt: new Date(row.created_at), inReplyToId: row.in_reply_to_id, visibility: row.visibility, reblogOfId: row.reblog_of_id };
}

/**
 * Deletes the author's status (and the reblogs of it, as Mastodon does), or the author's reblog.
 * The caller renders the status it read before (with its source text and media). Its media stay,
 * unattached, for "delete and redraft" (as Mastodon), unless `deleteMedia` (Mastodon's
 * `delete_media`): then they go, their files once the deletion committed.
 */
export async function deleteStatus(services: Services, accountId: string, id: string, opts: { deleteMedia?: boolean } = {}): Promise<void> {
  const now = services.clock.now();
  // An entity manager's transaction: the status' poll actor steps in it (the actor store's way).
  const files = await services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    const s = await ownStatus(sql, accountId, id);
    await discardStatus(sql, { ...s, accountId }, now);
    const released = await releaseStatusMedia(sql, id, { deleteMedia: opts.deleteMedia, now });
    if (!s.reblogOfId) await deletePollOfStatus(services, em, id, 'client');
    const reblogs = await sql.query<{ id: string; account_id: string; created_at: string }>(
      `select id::text, account_id::text, created_at from statuses where reblog_of_id = $1 and deleted_at is null for update`,
      [id],
    );
    for (const r of reblogs) {
      await discardStatus(sql, { id: r.id, accountId: r.account_id, createdAt: new Date(r.created_at), inReplyToId: null, reblogOfId: null }, now);
    }
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: id,
      origin: 'client',
      // Deleting one's reblog is taking the reblog back.
      event: s.reblogOfId
        ? { type: 'status.unreblogged', statusId: id, reblogOfId: s.reblogOfId, accountId }
        : { type: 'status.deleted', statusId: id, accountId, local: true, reblogIds: reblogs.map((r) => r.id) },
    });
    return released;
  });
  await removeStoredFiles(services, files);
}

/** The status the viewer acts on: visible to them, and for a reblog its original. */
async function actedOn(services: Services, viewerId: string, id: string): Promise<StatusFacts> {
  const s = await findVisibleStatus(services, id, viewerId);
  if (!s) throw notFound();
  if (s.reblogOfId) {
    const original = await findVisibleStatus(services, s.reblogOfId, viewerId);
    if (!original) throw notFound();
    return original;
  }
  return s;
}

/** Favourites a status (again: nothing more). Returns the id of the status favourited. */
export async function favouriteStatus(services: Services, accountId: string, id: string): Promise<string> {
  const s = await actedOn(services, accountId, id);
  const now = services.clock.now();
  await services.db.sql.transaction(async (sql) => {
    const favId = services.ids.next();
    const added = await sql.query(
      `insert into favourites (id, account_id, status_id, created_at) values ($1, $2, $3, $4) on conflict (account_id, status_id) do nothing returning id`,
      [favId, accountId, s.id, now],
    );
    if (added.length === 0) return;
    await bumpStatusStats(sql, s.id, 'favourites_count', 1);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: s.id,
      origin: 'client',
      event: { type: 'status.favourited', statusId: s.id, accountId, favouriteId: favId, statusAccountId: s.accountId },
    });
  });
  return s.id;
}

/** Takes a favourite back (none: nothing). The status needs only to exist, as on Mastodon. */
export async function unfavouriteStatus(services: Services, accountId: string, id: string): Promise<string> {
  const s = await actedOn(services, accountId, id).catch(async (e) => {
    // A favourite of a status since hidden may still be taken back.
    const [row] = await services.db.sql.query<{ id: string }>(`select status_id::text as id from favourites where account_id = $1 and status_id = $2`, [accountId, id]);
    if (!row) throw e;
    return { id: row.id, accountId: '' } as StatusFacts;
  });
  await services.db.sql.transaction(async (sql) => {
    const removed = await sql.query<{ id: string }>(`delete from favourites where account_id = $1 and status_id = $2 returning id::text`, [accountId, s.id]);
    if (removed.length === 0) return;
    await bumpStatusStats(sql, s.id, 'favourites_count', -1);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: s.id,
      origin: 'client',
      event: { type: 'status.unfavourited', statusId: s.id, accountId, favouriteId: removed[0]!.id },
    });
  });
  return s.id;
}

/**
 * Reblogs a status with a visibility (public by default; unlisted or private). Direct and limited
 * statuses cannot be reblogged, private ones only by their author (Mastodon's StatusPolicy#reblog?).
 * Returns the reblog's id (an existing reblog: that one).
 */
export async function reblogStatus(services: Services, author: StatusAuthor, id: string, visibility?: string): Promise<string> {
  const { account } = author;
  const s = await actedOn(services, account.id, id);
  if (s.visibility === 'direct' || s.visibility === 'limited' || (s.visibility === 'private' && s.accountId !== account.id)) {
    throw new RoostError(403, 'This action is not allowed');
  }
  let vis: StatusVisibility = 'public';
  if (visibility !== undefined && visibility !== '') {
    if (!['public', 'unlisted', 'private'].includes(visibility)) {
      throw new RoostError(422, 'Validation failed: Visibility is not included in the list', {
        details: { visibility: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] },
      });
    }
    vis = visibility as StatusVisibility;
  }
  // A private status reblogged by its author stays private.
  if (s.visibility === 'private') vis = 'private';
  const now = services.clock.now();
  const reblogId = services.ids.next();
  return services.db.sql.transaction(async (sql) => {
    // One reblog per account and status: lock the original, then look.
    await sql.query(`select id from statuses where id = $1 for update`, [s.id]);
    const [existing] = await sql.query<{ id: string }>(
      `select id::text from statuses where reblog_of_id = $1 and account_id = $2 and deleted_at is null`,
      [s.id, account.id],
    );
    if (existing) return existing.id;
    await insertReblog(services, sql, {
      id: reblogId,
      accountId: account.id,
      local: true,
      uri: `${statusUri(account, reblogId)}/activity`,
      visibility: vis,
      reblogOf: { id: s.id, accountId: s.accountId },
      applicationId: author.applicationId,
      createdAt: now,
    }, now, 'client');
    return reblogId;
  });
}

/** Undoes the viewer's reblog of the status (none: nothing). Returns the original's id. */
export async function unreblogStatus(services: Services, accountId: string, id: string): Promise<string> {
  const s = await actedOn(services, accountId, id);
  const now = services.clock.now();
  await services.db.sql.transaction(async (sql) => {
    const [reblog] = await sql.query<{ id: string; created_at: string }>(
      `select id::text, created_at from statuses where reblog_of_id = $1 and account_id = $2 and deleted_at is null for update`,
      [s.id, accountId],
    );
    if (!reblog) return;
    await discardStatus(sql, { id: reblog.id, accountId, createdAt: new Date(reblog.created_at), inReplyToId: null, reblogOfId: s.id }, now);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: reblog.id,
      origin: 'client',
      event: { type: 'status.unreblogged', statusId: reblog.id, reblogOfId: s.id, accountId },
    });
  });
  return s.id;
}

/** Bookmarks (on) or un-bookmarks (off) a status the viewer may see. Returns the status id. */
export async function setBookmark(services: Services, accountId: string, id: string, on: boolean): Promise<string> {
  const s = await actedOn(services, accountId, id);
  if (on) {
    await services.db.sql.query(
      `insert into bookmarks (id, account_id, status_id, created_at) values ($1, $2, $3, $4) on conflict (account_id, status_id) do nothing`,
      [services.ids.next(), accountId, s.id, services.clock.now()],
    );
  } else {
    await services.db.sql.query(`delete from bookmarks where account_id = $1 and status_id = $2`, [accountId, s.id]);
  }
  return s.id;
}

function pinError(description: string): RoostError {
  return new RoostError(422, `Validation failed: ${description}`, { details: { status: [{ error: 'ERR_INVALID', description }] } });
}

/** Pins one of the viewer's own statuses, not a direct one (at most config.limits.accounts.maxPinnedStatuses). */
export async function pinStatus(services: Services, accountId: string, id: string): Promise<string> {
  const s = await findVisibleStatus(services, id, accountId);
  if (!s) throw notFound();
  if (s.reblogOfId) throw pinError('A boost cannot be pinned');
  if (s.accountId !== accountId) throw pinError('Post that belongs to another person cannot be pinned');
  // Mastodon (since 4.0) pins followers-only posts too; only direct ones are refused.
  if (s.visibility === 'direct') throw pinError('Posts that are only visible to mentioned users cannot be pinned');
  const max = services.config.limits.accounts.maxPinnedStatuses;
  await services.db.sql.transaction(async (sql) => {
    // Lock the account's row so two pins at once cannot both pass the limit.
    await sql.query(`select id from accounts where id = $1 for update`, [accountId]);
    const [pinned] = await sql.query<{ n: number; here: boolean }>(
      `select count(*)::int as n, bool_or(status_id = $2) as here from status_pins where account_id = $1`,
      [accountId, s.id],
    );
    if (pinned?.here) return;
    if ((pinned?.n ?? 0) >= max) throw pinError('You have already pinned the maximum number of posts');
    const pinId = services.ids.next();
    await sql.query(`insert into status_pins (id, account_id, status_id, created_at) values ($1, $2, $3, $4)`, [pinId, accountId, s.id, services.clock.now()]);
    // Federated as Add to the featured collection (Mastodon's PinsController).
    await recordEvent(services, sql, { actorKind: 'status', actorId: s.id, origin: 'client', event: { type: 'status.pinned', statusId: s.id, accountId, pinId } });
  });
  return s.id;
}

export async function unpinStatus(services: Services, accountId: string, id: string): Promise<string> {
  const s = await findVisibleStatus(services, id, accountId);
  if (!s) throw notFound();
  await services.db.sql.transaction(async (sql) => {
    const [pin] = await sql.query<{ id: string }>(`delete from status_pins where account_id = $1 and status_id = $2 returning id::text`, [accountId, s.id]);
    // Federated as Remove from the featured collection.
    if (pin) await recordEvent(services, sql, { actorKind: 'status', actorId: s.id, origin: 'client', event: { type: 'status.unpinned', statusId: s.id, accountId, pinId: pin.id } });
  });
  return s.id;
}
