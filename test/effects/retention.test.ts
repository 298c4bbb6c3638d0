/**
 * The spine's tables stay bounded and its writes idempotent (src/events/retention.ts,
 * src/streaming/store.ts): old outbox facts are pruned in bounded batches, recent ones kept; a
 * streaming frame written twice under one source key is stored and announced once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { pruneOutbox, PRUNE_BATCH } from '../../src/events/retention.ts';
import { writeStreamingEvent } from '../../src/streaming/store.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
}, 60_000);
afterAll(async () => roost?.close());

const DAY = 86_400_000;

describe('outbox retention', () => {
  it('deletes facts older than the retention, oldest first, at most a batch at a time, and keeps the rest', async () => {
    const sql = roost.services.db.sql;
    const now = new Date('2026-11-28T12:00:00Z');
    await sql.query(`delete from outbox_events`);
    // 3 facts 20 days old, 2 facts 13 days old, 1 of today.
    const insert = (ageDays: number, seq: number) =>
      sql.query(
        `insert into outbox_events (actor_kind, actor_id, actor_version, seq, origin, type, payload, created_at)
         values ('account', $1::bigint, null, 0, 'client', 'filters.changed', json_build_object('type', 'filters.changed', 'accountId', $1::text), $2)`,
        [String(1000 + seq), new Date(now.getTime() - ageDays * DAY)],
      );
    for (let i = 0; i < 3; i++) await insert(20, i);
    for (let i = 3; i < 5; i++) await insert(13, i);
    await insert(0, 5);
    expect(await pruneOutbox(sql, now, 14)).toBe(3);
    const left = await sql.query<{ actor_id: string }>(`select actor_id::text from outbox_events order by id`);
    expect(left.map((r) => r.actor_id)).toEqual(['1003', '1004', '1005']);
    expect(await pruneOutbox(sql, now, 14)).toBe(0);
    expect(await pruneOutbox(sql, now, 1)).toBe(2);
    expect(PRUNE_BATCH).toBe(10_000);
  });

  it('is configured by events.retentionDays (14 by default)', () => {
    expect(roost.config.events.retentionDays).toBe(14);
  });
});

describe('streaming frames under a source key', () => {
  it('writes the first and drops a second with the same key', async () => {
    const sql = roost.services.db.sql;
    const input = { streams: ['user:1'], event: 'filters_changed', payload: null, sourceKey: 'outbox:42/filters_changed' };
    const first = await writeStreamingEvent(roost.services, input);
    expect(first).toMatch(/^\d+$/);
    expect(await writeStreamingEvent(roost.services, input)).toBeNull();
    // Frames without a key (none given) are never taken for each other.
    const a = await writeStreamingEvent(roost.services, { ...input, sourceKey: null });
    const b = await writeStreamingEvent(roost.services, { ...input, sourceKey: null });
    expect(a).not.toBe(b);
    const rows = await sql.query<{ n: string }>(`select count(*)::text as n from streaming_events where source_key = 'outbox:42/filters_changed'`);
    expect(rows[0]!.n).toBe('1');
  });
});
