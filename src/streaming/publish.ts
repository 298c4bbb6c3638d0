/**
 * What goes to which stream, rendered once through src/views/ (as Mastodon's InlineRenderer: a
 * public rendering, without viewer flags), written to the streaming event log
 * (src/streaming/store.ts) from which every streaming process delivers it. Called by the outbox consumer (src/effects/streaming.ts)
 * after the home-feed fan-out, so home_feeds/list_feeds rows already say whose feeds got a status.
 *
 *   status.created   update → public streams (public, not a reply to someone else, not a reblog;
 *                    local/remote and media variants), hashtag streams, `user` of the author and
 *                    of each local follower whose home feed got it, lists that got it; direct →
 *                    `conversation` on the direct stream of each local participant
 *   status.updated   status.update → the same audience
 *   status.deleted   delete (the bare id) → the same audience, and each deleted reblog's
 *   status.reblogged update (the reblog) → `user` of the booster and of followers who got it, lists
 *   filters.changed  filters_changed (no payload) → the account's `user` stream
 *   notifications.merged  notifications_merged (payload `1`, as Mastodon) → the account's `user`
 *                    and `user:notification` streams
 */
import type { Services } from '../context.ts';
import { renderStatuses } from '../views/statuses.ts';
import { renderConversations } from '../views/conversations.ts';
import { visibleSql } from '../services/reads/statuses.ts';
import { writeStreamingEvent } from './store.ts';
import { prepared } from '../db/prepared.ts';
import { hashtagKey } from './streams.ts';
import type { HandledBy } from '../events/consumers.ts';

interface StatusFacts {
  id: string;
  accountId: string;
  visibility: string;
  local: boolean;
  domain: string | null;
  reblog: boolean;
  reply: boolean;
  media: boolean;
  tags: string[];
  mentionIds: string[];
  /** `user:` and `list:` keys of the home and list feeds that hold it now. */
  feedKeys: string[];
}

async function statusFacts(services: Services, id: string): Promise<StatusFacts | null> {
  const [r] = await services.db.sql.query<{
    id: string; account_id: string; visibility: string; domain: string | null; reblog: boolean; reply_other: boolean; media: boolean; tags: string[] | null; mentions: string[] | null;
    feeds: string[] | null;
  }>(
    prepared(`select s.id::text, s.account_id::text, s.visibility, a.domain, s.reblog_of_id is not null as reblog,
            (s.in_reply_to_id is not null and s.in_reply_to_account_id is distinct from s.account_id) as reply_other,
            exists (select 1 from media_attachments m where m.status_id = coalesce(s.reblog_of_id, s.id)) as media,
            array(select t.name from statuses_tags st join tags t on t.id = st.tag_id where st.status_id = s.id) as tags,
            array(select m.account_id::text from mentions m where m.status_id = coalesce(s.reblog_of_id, s.id)) as mentions,
            array(select 'user:' || h.account_id::text from home_feeds h where h.status_id = s.id
                  union select 'list:' || l.list_id::text from list_feeds l where l.status_id = s.id) as feeds
       from statuses s join accounts a on a.id = s.account_id where s.id = $1`),
    [id],
  );
  if (!r) return null;
  return {
    id: r.id, accountId: r.account_id, visibility: r.visibility, local: r.domain === null, domain: r.domain, reblog: r.reblog,
    reply: r.reply_other, media: r.media, tags: r.tags ?? [], mentionIds: r.mentions ?? [], feedKeys: r.feeds ?? [],
  };
}

/** The stream keys of a status (its feeds as they were when its facts were read). */
function audience(f: StatusFacts): string[] {
  const keys: string[] = [];
  if (f.visibility === 'public' && !f.reblog) {
    if (!f.reply) {
      const where = f.local ? 'local' : 'remote';
      keys.push('public', `public:${where}`);
      if (f.media) keys.push('public:media', `public:${where}:media`);
    }
    for (const tag of f.tags) {
      keys.push(hashtagKey(tag, false));
      if (f.local) keys.push(hashtagKey(tag, true));
    }
  }
  keys.push(...f.feedKeys);
  if (f.local) keys.push(`user:${f.accountId}`);
  return [...new Set(keys)];
}

async function publishStatus(services: Services, statusId: string, event: 'update' | 'status.update', key: string): Promise<void> {
  const f = await statusFacts(services, statusId);
  if (!f) return;
  // Rendered for nobody in particular (no viewer flags).
  const [json] = await renderStatuses(services, [statusId], null);
  if (!json) return;
  const payload = JSON.stringify(json);
  const streams = audience(f);
  await writeStreamingEvent(services, { streams, event, payload, authorId: f.accountId, mentionIds: f.mentionIds, authorDomain: f.domain, sourceKey: `${key}/${event}` });
  if (event === 'update' && f.visibility === 'direct') await publishConversations(services, statusId, key);
}

/** `conversation` on the direct stream of each local participant of a direct status. */
async function publishConversations(services: Services, statusId: string, key: string): Promise<void> {
  const rows = await services.db.sql.query<{ id: string; account_id: string; unread: boolean; participants: string[] | null; last_status_id: string | null }>(
    `select ac.id::text, ac.account_id::text, ac.unread, ac.participant_account_ids::text[] as participants,
            (select max(s.id)::text from statuses s where s.id = any(ac.status_ids) and ${visibleSql('s', 'ac.account_id')}) as last_status_id
       from account_conversations ac join accounts a on a.id = ac.account_id and a.domain is null
      where $1::bigint = any(ac.status_ids)`,
    [statusId],
  );
  for (const r of rows) {
    const [json] = await renderConversations(services, [{ id: r.id, unread: r.unread, participantIds: r.participants ?? [], lastStatusId: r.last_status_id }], r.account_id);
    await writeStreamingEvent(services, {
      streams: [`direct:${r.account_id}`], event: 'conversation', payload: JSON.stringify(json), sourceKey: `${key}/conversation:${r.account_id}`,
    });
  }
}

async function publishDelete(services: Services, statusId: string, reblogIds: readonly string[], key: string): Promise<void> {
  for (const id of [statusId, ...reblogIds]) {
    const f = await statusFacts(services, id);
    if (!f) continue;
    const streams = audience(f);
    if (f.visibility === 'direct') {
      const rows = await services.db.sql.query<{ key: string }>(
        `select 'direct:' || ac.account_id::text as key from account_conversations ac join accounts a on a.id = ac.account_id and a.domain is null
          where $1::bigint = any(ac.status_ids)`,
        [id],
      );
      streams.push(...rows.map((r) => r.key));
    }
    await writeStreamingEvent(services, { streams, event: 'delete', payload: id, sourceKey: `${key}/delete:${id}` });
  }
}

/**
 * Streams one committed outbox fact (the consumer in src/effects/streaming.ts). `key` names the
 * fact (`outbox:<event id>`): each frame written for it carries a source key made from it, so a
 * retry writes no frame twice.
 */
export async function publishOutboxEvent(services: Services, event: HandledBy<'streaming'>, key: string): Promise<void> {
  switch (event.type) {
    case 'status.created':
    case 'status.reblogged':
      await publishStatus(services, event.statusId, 'update', key);
      return;
    case 'status.updated':
      await publishStatus(services, event.statusId, 'status.update', key);
      return;
    case 'status.deleted':
      await publishDelete(services, event.statusId, event.reblogIds, key);
      return;
    case 'filters.changed':
      await publishFiltersChanged(services, event.accountId, `${key}/filters_changed`);
      return;
    case 'notifications.merged':
      await writeStreamingEvent(services, {
        streams: [`user:${event.accountId}`, `user:notification:${event.accountId}`],
        event: 'notifications_merged',
        payload: '1',
        sourceKey: `${key}/notifications_merged`,
      });
      return;
    default:
      event satisfies never;
  }
}

/** `notification` on the account's user and user:notification streams (the notifications sink calls this). */
export async function publishNotification(services: Services, accountId: string, notificationJson: { id: string }): Promise<void> {
  await writeStreamingEvent(services, {
    streams: [`user:${accountId}`, `user:notification:${accountId}`],
    event: 'notification',
    payload: JSON.stringify(notificationJson),
    // One frame per notification, however often the notifications consumer hands it over.
    sourceKey: `notification:${notificationJson.id}`,
  });
}

/** `filters_changed` (no payload) on the account's user stream. */
export async function publishFiltersChanged(services: Services, accountId: string, sourceKey: string | null = null): Promise<void> {
  await writeStreamingEvent(services, { streams: [`user:${accountId}`], event: 'filters_changed', payload: null, sourceKey });
}

/** `announcement` on the user stream of every local account (no source of announcements yet: the plumbing). */
export async function publishAnnouncement(services: Services, announcementJson: unknown): Promise<void> {
  const rows = await services.db.sql.query<{ key: string }>(`select 'user:' || id::text as key from accounts where domain is null`);
  await writeStreamingEvent(services, { streams: rows.map((r) => r.key), event: 'announcement', payload: JSON.stringify(announcementJson) });
}
