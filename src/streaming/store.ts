/**
 * The streaming event log (table streaming_events, see Migration20261127002000_streaming): written
 * once per rendered event by the outbox consumer, announced with NOTIFY (the id only: NOTIFY
 * payloads are capped at 8000 bytes), read by id by every process serving streaming clients, and
 * kept for RESUME_WINDOW_MS as the resume buffer.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';

/** The NOTIFY channel announcing new streaming_events rows (payload: the id). */
export const STREAMING_CHANNEL = 'roost_streaming';
/** How long events stay available to clients that reconnect with their last event id. */
export const RESUME_WINDOW_MS = 10 * 60_000;
/** At most this many missed events are replayed to one reconnecting client. */
export const RESUME_MAX_EVENTS = 5_000;

export interface StreamingEventInput {
  /** Stream keys (src/streaming/streams.ts): 'public', 'user:<id>', 'hashtag:<tag>', 'list:<id>' … */
  streams: readonly string[];
  event: string;
  /** The frame's payload string (JSON text, or a bare id for delete); null for none (filters_changed). */
  payload: string | null;
  /** For status events: the author, mentioned accounts and author's domain (block/mute checks). */
  authorId?: string | null;
  mentionIds?: readonly string[];
  authorDomain?: string | null;
  /**
   * What writes it, unique while the row is kept (`outbox:<event id>/update`, `notification:<id>`):
   * a second write with the same key is dropped, not announced (a retried consumer).
   */
  sourceKey?: string | null;
}

export interface StreamingEventRow {
  id: string;
  streams: string[];
  event: string;
  payload: string | null;
  authorId: string | null;
  mentionIds: string[];
  authorDomain: string | null;
}

const COLUMNS = `id::text, streams, event, payload, author_id::text as author_id, mention_ids::text[] as mention_ids, author_domain`;
/**
 * The numeric order of the rows: a bare `order by id` would name the output column `id::text`
 * and sort the ids as text (…, 10, 100, 11, …), out of the order events must be delivered in.
 */
const IN_ID_ORDER = `order by streaming_events.id`;

function toRow(r: Record<string, unknown>): StreamingEventRow {
  return {
    id: r.id as string,
    streams: r.streams as string[],
    event: r.event as string,
    payload: (r.payload as string | null) ?? null,
    authorId: (r.author_id as string | null) ?? null,
    mentionIds: (r.mention_ids as string[] | null) ?? [],
    authorDomain: (r.author_domain as string | null) ?? null,
  };
}

/**
 * Writes one event and announces it (one statement: the NOTIFY is delivered when, and only if,
 * the row commits), unless a row with its source key is there already (null is returned then).
 * Every 256th row also deletes rows older than the resume window.
 */
export async function writeStreamingEvent(services: Services, input: StreamingEventInput): Promise<string | null> {
  if (input.streams.length === 0) return null;
  const now = services.clock.now();
  const [row] = await services.db.sql.query<{ id: string }>(
    `with ins as (
       insert into streaming_events (streams, event, payload, author_id, mention_ids, author_domain, created_at, source_key)
       values ($1::text[], $2, $3, $4::bigint, $5::bigint[], $6, $7, $8)
       on conflict (source_key) where source_key is not null do nothing
       returning id)
     select id::text, pg_notify('${STREAMING_CHANNEL}', id::text) from ins`,
    [[...new Set(input.streams)], input.event, input.payload, input.authorId ?? null, input.mentionIds ?? [], input.authorDomain ?? null, now, input.sourceKey ?? null],
  );
  if (row && BigInt(row.id) % 256n === 0n) {
    await services.db.sql.query(`delete from streaming_events where created_at < $1`, [new Date(now.getTime() - RESUME_WINDOW_MS)]);
  }
  return row?.id ?? null;
}

/** Rows after `cursor`, plus the ids in `holes` (rows of transactions that committed late), in id order. */
export async function readStreamingEventsAfter(sql: Sql, cursor: string, holes: readonly string[], limit = 1000): Promise<StreamingEventRow[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `select ${COLUMNS} from streaming_events where id > $1::bigint or id = any($2::bigint[]) ${IN_ID_ORDER} limit ${limit}`,
    [cursor, holes],
  );
  return rows.map(toRow);
}

/** The newest id (the cursor a process starts from). */
export async function lastStreamingEventId(sql: Sql): Promise<string> {
  const [row] = await sql.query<{ id: string | null }>(`select max(id)::text as id from streaming_events`);
  return row?.id ?? '0';
}

/**
 * What a reconnecting client missed: rows after `afterId`, up to `untilId`, on any of `streams`,
 * within the resume window, but for the ids in `except` (those the hub is still to deliver live).
 */
export async function readMissedEvents(
  services: Services,
  afterId: string,
  untilId: string,
  streams: readonly string[],
  except: readonly string[],
): Promise<StreamingEventRow[]> {
  const since = new Date(services.clock.now().getTime() - RESUME_WINDOW_MS);
  const rows = await services.db.sql.query<Record<string, unknown>>(
    `select ${COLUMNS} from streaming_events
      where id > $1::bigint and id <= $2::bigint and streams && $3::text[] and created_at >= $4 and id <> all($5::bigint[])
      ${IN_ID_ORDER} limit ${RESUME_MAX_EVENTS}`,
    [afterId, untilId, streams, since, except],
  );
  return rows.map(toRow);
}
