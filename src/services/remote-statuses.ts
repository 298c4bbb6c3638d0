/**
 * Statuses, reblogs and favourites that other servers tell us about (federation/inbox/*.ts and
 * remote status fetches, through federation/convert/from-as.ts, which sanitises and resolves
 * everything first). Each use case is one transaction writing the rows, the counters
 * (status_stats, account_stats) and one outbox fact with origin 'federation' — the same facts local
 * statuses record (`status.created`, `status.updated`, `status.deleted`, `status.reblogged`,
 * `status.unreblogged`, `status.favourited`, `status.unfavourited`), so notifications, streaming
 * and timelines hear of both alike; effects/dispatch.ts sends nothing for a remote author's facts.
 * Duplicates are applied once: a status or reblog by its unique uri, a favourite by (account, status).
 */
import type { Services } from '../context.ts';
import type { StatusVisibility } from '../db/entities/status.entity.ts';
import type { Sql } from '../db/sql.ts';
import { applyStatusToStats } from './account-stats.ts';
import { recordEvent } from './actor-store.ts';
import { bumpStatusStats, discardStatus, setUntrustedStatusCounts } from './statuses.ts';
import { persistRemoteMedia, type RemoteMediaItem } from './media.ts';
import { schedulePreviewCard } from './preview-cards.ts';
import { syncRemoteMedia } from './remote-media.ts';
import { recordOriginalVersion, recordStatusVersion } from './status-versions.ts';
import { createPoll, deletePollOfStatus } from './polls.ts';
import { sqlFromEm } from '../db/sql.ts';
import { joinConversation } from './conversations.ts';

/** A remote media attachment as the Note lists it (federation/convert/from-as.ts reads it). */
export type { RemoteMediaItem } from './media.ts';

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
  mentions: { accountId: string; silent: boolean }[];
  /** Hashtag names, without '#'. */
  tags: string[];
  createdAt: Date;
  editedAt: Date | null;
  attachments: RemoteMediaItem[];
  /** A Question's poll, stored with the status (its own actor, closed by its timer at expiresAt). */
  poll?: RemotePollInput | null;
  /** What its server says of its favourites and reblogs (the Note's likes/shares totalItems, clamped); null: unsaid. */
  untrusted?: UntrustedCounts;
}

/** A remote status's counts as its own server states them (status_stats' untrusted columns). */
export interface UntrustedCounts {
  favourites: number | null;
  reblogs: number | null;
}

/** A remote poll as its Question states it (federation/convert/from-as.ts questionPoll). */
export interface RemotePollInput {
  options: string[];
  counts: number[];
  multiple: boolean;
  expiresAt: Date | null;
  votersCount: number | null;
}

async function insertMentions(services: Services, sql: Sql, statusId: string, mentions: RemoteStatusInput['mentions'], now: Date) {
  const unique = [...new Map(mentions.map((m) => [m.accountId, m])).values()];
  if (unique.length === 0) return;
  await sql.query(
    `insert into mentions (id, status_id, account_id, silent, created_at)
     select x.id, $1, x.account_id, x.silent, $2 from unnest($3::bigint[], $4::bigint[], $5::boolean[]) as x(id, account_id, silent)
     on conflict (status_id, account_id) do update set silent = excluded.silent`,
    [statusId, now, unique.map(() => services.ids.next()), unique.map((m) => m.accountId), unique.map((m) => m.silent)],
  );
}

async function insertTags(services: Services, sql: Sql, statusId: string, tags: string[], now: Date) {
  const names = [...new Map(tags.map((t) => [t.toLowerCase(), t])).values()];
  if (names.length === 0) return;
  await sql.query(
    `insert into tags (id, name, created_at) select x.id, x.name, $1 from unnest($2::bigint[], $3::text[]) as x(id, name)
     on conflict (lower(name)) do nothing`,
    [now, names.map(() => services.ids.next()), names],
  );
  await sql.query(
    `insert into statuses_tags (status_id, tag_id) select $1, t.id from tags t where lower(t.name) = any($2::text[]) on conflict do nothing`,
    [statusId, names.map((t) => t.toLowerCase())],
  );
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
  const id = services.ids.next();
  return services.db.sql.transaction(async (sql) => {
    const parent = input.inReplyToId
      ? (await sql.query<{ account_id: string }>(`select account_id::text from statuses where id = $1 and deleted_at is null`, [input.inReplyToId]))[0]
      : undefined;
    const inserted = await sql.query<{ id: string }>(
      `insert into statuses (id, account_id, uri, url, text, content, spoiler_text, visibility, sensitive, language, local,
                             in_reply_to_id, in_reply_to_account_id, created_at, updated_at, edited_at)
       values ($1, $2, $3, $4, '', $5, $6, $7, $8, $9, false, $10, $11, $12, $13, $14)
       on conflict (uri) do nothing returning id::text`,
      [
        id, input.accountId, input.uri, input.url, input.content, input.spoilerText, input.visibility, input.sensitive, input.language,
        parent ? input.inReplyToId : null, parent?.account_id ?? null, input.createdAt, now, input.editedAt,
      ],
    );
    if (inserted.length === 0) {
      const [known] = await sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [input.uri]);
      return { id: known!.id, created: false };
    }
    await insertMentions(services, sql, id, input.mentions, now);
    await insertTags(services, sql, id, input.tags, now);
    // Stored as remote attachments (shown at their URL; nothing fetched), checked on the way in.
    await persistRemoteMedia(sql, services, id, input.accountId, input.attachments);
    // A card for its first link that is not a mention or a hashtag, as for a local status (queued only
    // when there is one; the job fetches it through the bounded fetcher).
    await schedulePreviewCard(services, sql, id, { html: input.content });
    await applyStatusToStats(sql, input.accountId, 1, input.createdAt);
    if (parent) await bumpStatusStats(sql, input.inReplyToId!, 'replies_count', 1);
    if (input.untrusted) await setUntrustedStatusCounts(sql, id, input.untrusted);
    const p = input.poll;
    const pollId = p
      ? await createPoll(services, sql, {
          statusId: id,
          accountId: input.accountId,
          local: false,
          uri: input.uri,
          options: p.options,
          multiple: p.multiple,
          hideTotals: false,
          expiresAt: p.expiresAt,
          votes: p.counts,
          // Unsaid for a single-choice poll: one voter per vote.
          votersCount: p.votersCount ?? (p.multiple ? 0 : p.counts.reduce((sum, n) => sum + n, 0)),
        }, 'federation')
      : null;
    // Its thread, as a local status's (a direct one is then kept in conversations: effects/conversations.ts).
    await joinConversation(services, sql, id, parent ? input.inReplyToId : null, now);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: id,
      origin: 'federation',
      event: {
        type: 'status.created', statusId: id, accountId: input.accountId, local: false, visibility: input.visibility, inReplyToId: parent ? input.inReplyToId : null,
        ...(pollId ? { pollId } : {}),
      },
    });
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
    const [row] = await sql.query<{ id: string; edited_at: string | null; created_at: string; content: string }>(
      `select id::text, edited_at, created_at, content from statuses
        where uri = $1 and account_id = $2 and not local and reblog_of_id is null and deleted_at is null for update`,
      [uri, accountId],
    );
    if (!row) return null;
    // Its server's counts, as Mastodon's update_counts!, whether or not the edit itself applies.
    if (c.untrusted) await setUntrustedStatusCounts(sql, row.id, c.untrusted);
    if (row.edited_at && new Date(row.edited_at).getTime() >= editedAt.getTime()) return null;
    await recordOriginalVersion(services, sql, row.id, accountId, new Date(row.created_at));
    await syncRemoteMedia(services, sql, row.id, accountId, c.attachments);
    await sql.query(
      `update statuses set content = $2, spoiler_text = $3, sensitive = $4, language = $5, edited_at = $6, updated_at = $7 where id = $1`,
      [row.id, c.content, c.spoilerText, c.sensitive, c.language, editedAt, now],
    );
    const keep = [...new Set(c.mentions.map((m) => m.accountId))];
    await sql.query(`delete from mentions where status_id = $1 and not (account_id = any($2::bigint[]))`, [row.id, keep]);
    await insertMentions(services, sql, row.id, c.mentions, now);
    await sql.query(`delete from statuses_tags where status_id = $1`, [row.id]);
    await insertTags(services, sql, row.id, c.tags, now);
    await recordStatusVersion(services, sql, row.id, accountId, editedAt);
    if (row.content !== c.content) {
      await sql.query(`delete from preview_cards_statuses where status_id = $1`, [row.id]);
      await schedulePreviewCard(services, sql, row.id, { html: c.content });
    }
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: row.id,
      origin: 'federation',
      event: { type: 'status.updated', statusId: row.id, accountId, local: false },
    });
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
    await discardStatus(services, sql, { id: s.id, accountId, createdAt: new Date(s.created_at), inReplyToId: s.in_reply_to_id, reblogOfId: s.reblog_of_id }, now);
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
      await discardStatus(services, sql, { id: r.id, accountId: r.account_id, createdAt: new Date(r.created_at), inReplyToId: null, reblogOfId: null }, now);
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
  const id = services.ids.next();
  return services.db.sql.transaction(async (sql) => {
    const [original] = await sql.query<{ account_id: string }>(
      `select account_id::text from statuses where id = $1 and deleted_at is null for update`,
      [r.reblogOfId],
    );
    const [existing] = await sql.query<{ id: string }>(
      `select id::text from statuses where uri = $1 or (reblog_of_id = $2 and account_id = $3 and deleted_at is null) limit 1`,
      [r.uri, r.reblogOfId, r.accountId],
    );
    if (existing || !original) return existing?.id ?? null;
    await sql.query(
      `insert into statuses (id, account_id, uri, url, visibility, local, reblog_of_id, created_at, updated_at)
       values ($1, $2, $3, null, $4, false, $5, $6, $7)`,
      [id, r.accountId, r.uri, r.visibility, r.reblogOfId, r.createdAt, now],
    );
    await applyStatusToStats(sql, r.accountId, 1, r.createdAt);
    await bumpStatusStats(sql, r.reblogOfId, 'reblogs_count', 1);
    await recordEvent(services, sql, {
      actorKind: 'status',
      actorId: id,
      origin: 'federation',
      event: { type: 'status.reblogged', statusId: id, reblogOfId: r.reblogOfId, accountId: r.accountId, visibility: r.visibility, statusAccountId: original.account_id },
    });
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
