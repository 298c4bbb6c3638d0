/**
 * Statuses, reblogs and favourites that other servers tell us about (federation/inbox/*.ts and
 * remote status fetches, through federation/convert/from-as.ts, which sanitises and resolves
 * everything first). Each use case is one transaction writing the rows, the counters
 * (status_stats, account_stats) and one outbox fact with origin 'federation' — the same facts local
 * statuses record (`status.created`, `status.updated`, `status.deleted`, `status.reblogged`,
 * `status.unreblogged`, `status.favourited`, `status.unfavourited`), so notifications, streaming
 * and timelines hear of both alike; effects/dispatch.ts sends nothing for a remote author's facts.
 * A status's rows are written by services/status-writer.ts, as a local status's; what is remote
 * stays here: the peer's URIs and counts, the order of its edits.
 * Duplicates are applied once: a status or reblog by its unique uri, a favourite by (account, status).
 */
import type { Services } from '../context.ts';
import type { StatusVisibility } from '../db/entities/status.entity.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { recordEvent } from './actor-store.ts';
import type { RemoteMediaItem } from './media.ts';
import { deletePollOfStatus } from './polls.ts';
import { syncRemoteMedia } from './remote-media.ts';
import { bumpStatusStats, discardStatus, insertReblog, insertStatus, rewriteStatus, setUntrustedStatusCounts, type MentionRow, type NewQuote, type UntrustedCounts } from './status-writer.ts';
import { recordOriginalVersion } from './status-versions.ts';

/** A remote media attachment as the Note lists it (federation/convert/from-as.ts reads it). */
export type { RemoteMediaItem } from './media.ts';
export type { UntrustedCounts } from './status-writer.ts';

/** A remote status, sanitised and with its references resolved to rows. */
export interface RemoteStatusInput {
  uri: string;
  url: string | null;
  accountId: string;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  visibility: StatusVisibility;
  /** The parent status row, when known (or fetched within bounds). */
  inReplyToId: string | null;
  /** Accounts mentioned (tags) and silently mentioned (in the audience only). */
  mentions: MentionRow[];
  /** Hashtag names, without '#'. */
  tags: string[];
  createdAt: Date;
  editedAt: Date | null;
  attachments: RemoteMediaItem[];
  /** A Question's poll, stored with the status (its own actor, closed by its timer at expiresAt). */
  poll?: RemotePollInput | null;
  /** What its server says of its favourites and reblogs (the Note's likes/shares totalItems, clamped); null: unsaid. */
  untrusted?: UntrustedCounts;
  /** Who may quote it, as its interactionPolicy says (public, followers, nobody; null: unsaid). */
  quotePolicy?: string | null;
  /** The post it quotes, resolved and checked (federation/quotes.ts). */
  quote?: NewQuote | null;
}

/** A remote poll as its Question states it (federation/convert/from-as.ts questionPoll). */
export interface RemotePollInput {
  options: string[];
  counts: number[];
  multiple: boolean;
  expiresAt: Date | null;
  votersCount: number | null;
}

/**
 * The id of a remote status or reblog, as Mastodon makes it: from its `published` time when that
 * lies in the past (so a post fetched late, a backfilled reply or an old post met through a boost
 * sorts where it was written, not where it arrived), from now when it is unsaid or in the future.
 * An id for a past moment has random low bits; one already taken is drawn again.
 */
async function remoteStatusId(services: Services, sql: Sql, createdAt: Date | null | undefined, now: Date): Promise<string> {
  if (!createdAt || !(createdAt.getTime() < now.getTime())) return services.ids.next();
  for (let attempt = 0; attempt < 8; attempt++) {
    const id = services.ids.next(createdAt);
    const [taken] = await sql.query(`select 1 from statuses where id = $1`, [id]);
    if (!taken) return id;
  }
  return services.ids.next();
}

/** The status row of `uri`, if any (deleted ones too). */
export async function statusByUri(services: Services, uri: string): Promise<{ id: string; accountId: string; local: boolean; deleted: boolean; visibility: StatusVisibility; reblogOfId: string | null } | null> {
  const [row] = await services.db.sql.query<{ id: string; account_id: string; local: boolean; deleted: boolean; visibility: StatusVisibility; reblog_of_id: string | null }>(
    `select id::text, account_id::text, local, deleted_at is not null as deleted, visibility, reblog_of_id::text from statuses where uri = $1`,
    [uri],
  );
  return row ? { id: row.id, accountId: row.account_id, local: row.local, deleted: row.deleted, visibility: row.visibility, reblogOfId: row.reblog_of_id } : null;
}

/**
 * Stores a remote status (a Create, or a status fetched as a reply's parent or an Announce's
 * object). Returns its id; a status already known by its uri is left as it is (created: false).
 */
export async function persistRemoteStatus(services: Services, input: RemoteStatusInput): Promise<{ id: string; created: boolean }> {
  const now = services.clock.now();
  return services.db.sql.transaction(async (sql) => {
    const id = await remoteStatusId(services, sql, input.createdAt, now);
    const parent = input.inReplyToId
      ? (await sql.query<{ account_id: string }>(`select account_id::text from statuses where id = $1 and deleted_at is null`, [input.inReplyToId]))[0]
      : undefined;
    const p = input.poll;
    const created = await insertStatus(services, sql, {
      id,
      accountId: input.accountId,
      local: false,
      uri: input.uri,
      url: input.url,
      text: '',
      content: input.content,
      spoilerText: input.spoilerText,
      visibility: input.visibility,
      sensitive: input.sensitive,
      language: input.language,
      parent: parent ? { id: input.inReplyToId!, accountId: parent.account_id } : null,
      applicationId: null,
      createdAt: input.createdAt,
      editedAt: input.editedAt,
      mentions: input.mentions,
      tags: input.tags,
      media: { remote: input.attachments },
      poll: p
        ? {
            uri: input.uri,
            options: p.options,
            multiple: p.multiple,
            hideTotals: false,
            expiresAt: p.expiresAt,
            votes: p.counts,
            // Unsaid for a single-choice poll: one voter per vote.
            votersCount: p.votersCount ?? (p.multiple ? null : p.counts.reduce((sum, n) => sum + n, 0)),
          }
        : null,
      untrusted: input.untrusted,
      quotePolicy: input.quotePolicy ?? null,
      quote: input.quote ?? null,
    }, now, { origin: 'federation' });
    if (!created) {
      const [known] = await sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [input.uri]);
      return { id: known!.id, created: false };
    }
    return { id, created: true };
  });
}

export interface RemoteStatusChanges {
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  /** When the author says it was edited (null: now). */
  editedAt: Date | null;
  mentions: RemoteStatusInput['mentions'];
  tags: string[];
  attachments: RemoteMediaItem[];
  /** The Note's likes/shares totalItems (clamped): taken from any Update of the author, even one older than the last edit. */
  untrusted?: UntrustedCounts;
}

/**
 * An Update(Note) of a remote status by its author: the text, spoiler, sensitivity, language,
 * mentions, hashtags and attachments (services/remote-media.ts) are replaced and edited_at set. An
 * Update older than the last edit applied is ignored (as Mastodon's UpdateStatusService). The
 * history is recorded as for a local edit (services/status-versions.ts): the original first, then
 * this version, each with its media and descriptions, so /history works for remote statuses too.
 * A changed text gets its card fetched again. Returns the status id, or null when nothing was
 * changed.
 */
export async function updateRemoteStatus(services: Services, accountId: string, uri: string, c: RemoteStatusChanges): Promise<string | null> {
  const now = services.clock.now();
  const editedAt = c.editedAt && c.editedAt.getTime() <= now.getTime() ? c.editedAt : now;
  return services.db.sql.transaction(async (sql) => {
    const [row] = await sql.query<{ id: string; edited_at: string | null; created_at: string; content: string; visibility: StatusVisibility }>(
      `select id::text, edited_at, created_at, content, visibility from statuses
        where uri = $1 and account_id = $2 and not local and reblog_of_id is null and deleted_at is null for update`,
      [uri, accountId],
    );
    if (!row) return null;
    // Its server's counts, as Mastodon's update_counts!, whether or not the edit itself applies.
    if (c.untrusted) await setUntrustedStatusCounts(sql, row.id, c.untrusted);
    if (row.edited_at && new Date(row.edited_at).getTime() >= editedAt.getTime()) return null;
    await recordOriginalVersion(services, sql, row.id, accountId, new Date(row.created_at));
    await syncRemoteMedia(services, sql, row.id, accountId, c.attachments);
    await rewriteStatus(services, sql, {
      id: row.id,
      accountId,
      local: false,
      visibility: row.visibility,
      text: null,
      content: c.content,
      spoilerText: c.spoilerText,
      sensitive: c.sensitive,
      language: c.language,
      editedAt,
      mentions: c.mentions,
      tags: c.tags,
      textChanged: row.content !== c.content,
    }, now, 'federation');
    return row.id;
  });
}

/**
 * A remote author deleted a status (or took a reblog back: an Announce's uri): it is marked
 * deleted with its counters, and the reblogs of a status go with it, as on Mastodon. Returns
 * whether anything was deleted.
 */
export async function deleteRemoteStatus(services: Services, accountId: string, uri: string): Promise<boolean> {
  const now = services.clock.now();
  // An entity manager's transaction: the status' poll actor steps in it (the actor store's way).
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    const [s] = await sql.query<{ id: string; created_at: string; in_reply_to_id: string | null; reblog_of_id: string | null }>(
      `select id::text, created_at, in_reply_to_id::text, reblog_of_id::text from statuses
        where uri = $1 and account_id = $2 and not local and deleted_at is null for update`,
      [uri, accountId],
    );
    if (!s) return false;
    await discardStatus(sql, { id: s.id, accountId, createdAt: new Date(s.created_at), inReplyToId: s.in_reply_to_id, reblogOfId: s.reblog_of_id }, now);
    if (s.reblog_of_id) {
      await recordEvent(services, sql, {
        actorKind: 'status',
        actorId: s.id,
        origin: 'federation',
        event: { type: 'status.unreblogged', statusId: s.id, reblogOfId: s.reblog_of_id, accountId },
      });
      return true;
    }
    await deletePollOfStatus(services, em, s.id, 'federation');
    const reblogs = await sql.query<{ id: string; account_id: string; created_at: string }>(
      `select id::text, account_id::text, created_at from statuses where reblog_of_id = $1 and deleted_at is null for update`,
      [s.id],
    );
    for (const r of reblogs) {
      await discardStatus(sql, { id: r.id, accountId: r.account_id, createdAt: new Date(r.created_at), inReplyToId: null, reblogOfId: null }, now);
    }
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: s.id,
      origin: 'federation',
      event: { type: 'status.deleted', statusId: s.id, accountId, local: false, reblogIds: reblogs.map((r) => r.id) },
    });
    return true;
  });
}

/**
 * A remote account reblogged (Announce) the status `reblogOfId`: a reblog row named by the
 * Announce's id; one per account and status, as locally. Returns the reblog's id.
 */
export async function receiveRemoteReblog(
  services: Services,
  r: { accountId: string; uri: string; reblogOfId: string; visibility: StatusVisibility; createdAt: Date },
): Promise<string | null> {
  const now = services.clock.now();
  return services.db.sql.transaction(async (sql) => {
    const id = await remoteStatusId(services, sql, r.createdAt, now);
    const [original] = await sql.query<{ account_id: string }>(
      `select account_id::text from statuses where id = $1 and deleted_at is null for update`,
      [r.reblogOfId],
    );
    const [existing] = await sql.query<{ id: string }>(
      `select id::text from statuses where uri = $1 or (reblog_of_id = $2 and account_id = $3 and deleted_at is null) limit 1`,
      [r.uri, r.reblogOfId, r.accountId],
    );
    if (existing || !original) return existing?.id ?? null;
    await insertReblog(services, sql, {
      id,
      accountId: r.accountId,
      local: false,
      uri: r.uri,
      visibility: r.visibility,
      reblogOf: { id: r.reblogOfId, accountId: original.account_id },
      applicationId: null,
      createdAt: r.createdAt,
    }, now, 'federation');
    return id;
  });
}

/** Undo(Announce): the reblog named by `uri`, else the account's reblog of `objectUri`. */
export async function undoRemoteReblog(services: Services, accountId: string, uri: string | null, objectUri: string | null): Promise<boolean> {
  const [row] = await services.db.sql.query<{ uri: string }>(
    `select r.uri from statuses r left join statuses o on o.id = r.reblog_of_id
      where r.account_id = $1 and r.reblog_of_id is not null and r.deleted_at is null and (r.uri = $2 or o.uri = $3)
      order by (r.uri = $2) desc limit 1`,
    [accountId, uri, objectUri],
  );
  return row ? deleteRemoteStatus(services, accountId, row.uri) : false;
}

/** A remote account favourited (Like) the status: once per account and status. */
export async function receiveRemoteFavourite(services: Services, accountId: string, statusId: string, uri: string | null): Promise<boolean> {
  const now = services.clock.now();
  return services.db.sql.transaction(async (sql) => {
    const [status] = await sql.query<{ account_id: string }>(`select account_id::text from statuses where id = $1 and deleted_at is null`, [statusId]);
    if (!status) return false;
    const favId = services.ids.next();
    const added = await sql.query(
      `insert into favourites (id, account_id, status_id, uri, created_at) values ($1, $2, $3, $4, $5)
       on conflict (account_id, status_id) do nothing returning id`,
      [favId, accountId, statusId, uri, now],
    );
    if (added.length === 0) return false;
    await bumpStatusStats(sql, statusId, 'favourites_count', 1);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: statusId,
      origin: 'federation',
      event: { type: 'status.favourited', statusId, accountId, favouriteId: favId, statusAccountId: status.account_id },
    });
    return true;
  });
}

/** Undo(Like): the account's favourite of the status goes. */
export async function undoRemoteFavourite(services: Services, accountId: string, statusId: string): Promise<boolean> {
  return services.db.sql.transaction(async (sql) => {
    const removed = await sql.query<{ id: string }>(`delete from favourites where account_id = $1 and status_id = $2 returning id::text`, [accountId, statusId]);
    if (removed.length === 0) return false;
    await bumpStatusStats(sql, statusId, 'favourites_count', -1);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: statusId,
      origin: 'federation',
      event: { type: 'status.unfavourited', statusId, accountId, favouriteId: removed[0]!.id },
    });
    return true;
  });
}
