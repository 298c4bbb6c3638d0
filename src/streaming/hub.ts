/**
 * The topic hub of one process: connections (WebSocket or SSE) subscribe to stream keys
 * (src/streaming/streams.ts); events arrive as streaming_events rows (src/streaming/store.ts),
 * announced by NOTIFY and read by id whichever process wrote them, and go to every subscription
 * of their keys, in id order, each exactly once.
 *
 * Per subscriber, a status event (update, status.update) is dropped when the subscriber blocks or
 * mutes its author or a mentioned account, blocks the author's domain, or is blocked by the author
 * (one statement per event for all subscribed accounts), then passed to the filter hook
 * (src/streaming/filters.ts) once per subscribed account.
 *
 * Resume: a connection that names the last event id it saw gets, before any live event, the rows
 * it missed on its streams (within the resume window), then the live events it would have got
 * meanwhile, each id once.
 */
import type { Services } from '../context.ts';
import type { JobNotifyListener } from '../jobs/notify.ts';
import { filterForSubscriber, forgetFilterSet, prefetchFilterSets, type StreamFilterVerdict } from './filters.ts';
import { lastStreamingEventId, readMissedEvents, readStreamingEventsAfter, STREAMING_CHANNEL, type StreamingEventRow } from './store.ts';
import type { ResolvedStream } from './streams.ts';

export interface StreamSink {
  /** 'ws' frames are Mastodon's JSON objects; 'sse' frames are `id:/event:/data:` blocks. */
  readonly format: 'ws' | 'sse';
  /** Writes a frame; false when the client is gone or was dropped (too slow). */
  write(text: string): boolean;
  /** Native topics of the transport (WebSocket): frames every member gets alike are published once. */
  topics?: { subscribe(topic: string): void; unsubscribe(topic: string): void };
}

/** The native topic of a subscription: everyone in it gets byte-identical frames. */
const topicOf = (sub: ResolvedStream) => `${sub.key}\u0000${sub.stream.join('\u0000')}`;

export class StreamClient {
  readonly accountId: string;
  readonly sink: StreamSink;
  /** key → subscription */
  readonly subs = new Map<string, ResolvedStream>();
  closed = false;
  /** While replaying missed events, live frames wait here. */
  pending: { id: string; frame: string }[] | null = null;
  constructor(accountId: string, sink: StreamSink) {
    this.accountId = accountId;
    this.sink = sink;
  }
}

const STATUS_EVENTS = new Set(['update', 'status.update']);
/** How long a gap in ids (a transaction that took an id and had not committed) is looked for. */
const HOLE_WAIT_MS = 5_000;

/** The frame of one event for one subscription. */
export function frameOf(format: 'ws' | 'sse', id: string, stream: readonly string[], event: string, payload: string | null): string {
  if (format === 'sse') return `id: ${id}\nevent: ${event}\ndata: ${payload ?? ''}\n\n`;
  return payload === null
    ? `{"stream":${JSON.stringify(stream)},"event":${JSON.stringify(event)},"id":"${id}"}`
    : `{"stream":${JSON.stringify(stream)},"event":${JSON.stringify(event)},"payload":${JSON.stringify(payload)},"id":"${id}"}`;
}

export class StreamingHub {
  readonly services: Services;
  readonly listener: JobNotifyListener | null;
  readonly byKey = new Map<string, Set<StreamClient>>();
  readonly clients = new Set<StreamClient>();
  /** Highest id whose delivery has begun (subscribers collected). */
  started = '0';
  cursor = '0';
  holes = new Map<string, number>();
  pumping = false;
  again = false;
  stopped = false;
  /** Events were announced while nobody was connected (the cursor is behind). */
  stale = false;
  refresh: Promise<void> | null = null;
  /** Sends a frame to every socket of a native topic (uWS publish), when the transport has one. */
  publisher: ((topic: string, frame: string) => void) | null = null;
  /** topic → clients subscribed to it natively. */
  readonly topicMembers = new Map<string, Set<StreamClient>>();
  unlisten: (() => Promise<void>) | null = null;
  holeTimer: NodeJS.Timeout | null = null;
  /** Chain of deliveries (events go out in id order). */
  readonly log;

  constructor(services: Services, listener: JobNotifyListener | null) {
    this.services = services;
    this.listener = listener;
    this.log = services.log.child({ module: 'streaming' });
  }

  async start(): Promise<void> {
    this.cursor = this.started = await lastStreamingEventId(this.services.db.sql);
    if (this.listener) this.unlisten = await this.listener.subscribe(STREAMING_CHANNEL, () => this.wake());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.holeTimer) clearTimeout(this.holeTimer);
    await this.unlisten?.().catch(() => {});
  }

  /** A new row may be there (NOTIFY, or a write in this process). */
  wake(): void {
    if (this.stopped) return;
    // Nobody connected: nothing is read; the first client to connect moves the cursor to the newest row.
    if (this.clients.size === 0 && !this.pumping) {
      this.stale = true;
      return;
    }
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump()
      .catch((err) => this.log.error({ err }, 'streaming delivery failed'))
      .finally(() => {
        this.pumping = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async pump(): Promise<void> {
    if (this.refresh) await this.refresh;
    for (;;) {
      this.again = false;
      const now = performance.now();
      for (const [id, since] of this.holes) if (now - since > HOLE_WAIT_MS) this.holes.delete(id);
      const rows = await readStreamingEventsAfter(this.services.db.sql, this.cursor, [...this.holes.keys()]);
      for (const row of rows) {
        const id = BigInt(row.id);
        if (this.holes.delete(row.id)) {
          // a late commit: delivered now
        } else if (id > BigInt(this.cursor)) {
          for (let h = BigInt(this.cursor) + 1n; h < id && this.holes.size < 1000; h++) this.holes.set(h.toString(), now);
          this.cursor = row.id;
        }
        if (id > BigInt(this.started)) this.started = row.id;
        if (row.event === 'filters_changed') for (const key of row.streams) if (key.startsWith('user:')) forgetFilterSet(this.services, key.slice(5));
        await this.deliver(row, this.subscribersOf(row));
      }
      if (this.holes.size > 0 && !this.holeTimer) {
        this.holeTimer = setTimeout(() => {
          this.holeTimer = null;
          this.wake();
        }, 250);
        this.holeTimer.unref?.();
      }
      if (rows.length < 1000 && !this.again) return;
    }
  }

  subscribersOf(row: StreamingEventRow): { client: StreamClient; sub: ResolvedStream }[] {
    const out: { client: StreamClient; sub: ResolvedStream }[] = [];
    for (const key of row.streams) {
      const set = this.byKey.get(key);
      if (!set) continue;
      for (const client of set) {
        const sub = client.subs.get(key);
        if (sub) out.push({ client, sub });
      }
    }
    return out;
  }

  /** Sends one event to the given subscriptions, dropping it for those who must not get it. */
  async deliver(row: StreamingEventRow, targets: { client: StreamClient; sub: ResolvedStream }[], replayTo?: StreamClient): Promise<void> {
    if (targets.length === 0) return;
    let dropped: Set<string> | null = null;
    const verdicts = new Map<string, StreamFilterVerdict>();
    if (STATUS_EVENTS.has(row.event) && row.authorId !== null) {
      const accounts = [...new Set(targets.map((t) => t.client.accountId))];
      dropped = await this.droppedFor(row, accounts);
      await prefetchFilterSets(this.services, accounts.filter((a) => !dropped!.has(a)));
      let status: Record<string, unknown> | null = null;
      for (const t of targets) {
        const vkey = `${t.client.accountId} ${t.sub.context}`;
        if (verdicts.has(vkey) || dropped.has(t.client.accountId)) continue;
        status ??= JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
        verdicts.set(vkey, await filterForSubscriber(this.services, t.client.accountId, status, t.sub.context));
      }
    }
    const frames = new Map<string, string>();
    // Clients of a native topic who get the shared frame: published once when that is all of them.
    const native = new Map<string, { frame: string; clients: StreamClient[] }>();
    for (const { client, sub } of targets) {
      if (client.closed || dropped?.has(client.accountId)) continue;
      const verdict = verdicts.size === 0 ? undefined : verdicts.get(`${client.accountId} ${sub.context}`);
      if (verdict?.hidden) continue;
      let frame: string;
      if (verdict?.filtered && verdict.filtered.length > 0) {
        const status = JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
        frame = frameOf(client.sink.format, row.id, sub.stream, row.event, JSON.stringify({ ...status, filtered: verdict.filtered }));
      } else {
        const fkey = `${client.sink.format}${sub.stream.join('\u0000')}`;
        frame = frames.get(fkey) ?? frameOf(client.sink.format, row.id, sub.stream, row.event, row.payload);
        frames.set(fkey, frame);
        if (this.publisher !== null && client.sink.topics && client.pending === null && replayTo === undefined) {
          const topic = topicOf(sub);
          let group = native.get(topic);
          if (!group) native.set(topic, (group = { frame, clients: [] }));
          group.clients.push(client);
          continue;
        }
      }
      if (client.pending !== null && client !== replayTo) client.pending.push({ id: row.id, frame });
      else if (!client.sink.write(frame)) this.disconnect(client);
    }
    for (const [topic, group] of native) {
      if (group.clients.length === this.topicMembers.get(topic)?.size) {
        this.publisher!(topic, group.frame);
        continue;
      }
      for (const client of group.clients) if (!client.closed && !client.sink.write(group.frame)) this.disconnect(client);
    }
  }

  /** The accounts among `accounts` that must not see this status event. */
  async droppedFor(row: StreamingEventRow, accounts: string[]): Promise<Set<string>> {
    const rows = await this.services.db.sql.query<{ id: string }>(
      `select a.id::text from unnest($1::bigint[]) as a(id)
        where a.id <> $3::bigint and (
              exists (select 1 from blocks b where b.account_id = a.id and b.target_account_id = any($2::bigint[]))
           or exists (select 1 from blocks b where b.account_id = $3::bigint and b.target_account_id = a.id)
           or exists (select 1 from mutes m where m.account_id = a.id and m.target_account_id = any($2::bigint[])
                        and (m.expires_at is null or m.expires_at > $5))
           or ($4::text is not null and exists (select 1 from account_domain_blocks d where d.account_id = a.id and d.domain = $4)))`,
      [accounts, [row.authorId, ...row.mentionIds], row.authorId, row.authorDomain, this.services.clock.now()],
    );
    return new Set(rows.map((r) => r.id));
  }

  connect(accountId: string, sink: StreamSink): StreamClient {
    const client = new StreamClient(accountId, sink);
    this.clients.add(client);
    // The first client after a quiet spell: the cursor catches up now, before its events come.
    if (this.stale) {
      this.stale = false;
      this.refresh = lastStreamingEventId(this.services.db.sql).then(
        (id) => {
          if (BigInt(id) > BigInt(this.cursor)) {
            this.cursor = this.started = id;
            this.holes.clear();
          }
          this.refresh = null;
        },
        (err) => {
          this.refresh = null;
          this.log.error({ err }, 'streaming cursor refresh failed');
        },
      );
      this.wake();
    }
    return client;
  }

  subscribe(client: StreamClient, sub: ResolvedStream): void {
    if (client.closed) return;
    const previous = client.subs.get(sub.key);
    if (previous) this.unsubscribe(client, sub.key);
    client.subs.set(sub.key, sub);
    let set = this.byKey.get(sub.key);
    if (!set) this.byKey.set(sub.key, (set = new Set()));
    set.add(client);
    if (client.sink.topics) {
      const topic = topicOf(sub);
      client.sink.topics.subscribe(topic);
      let members = this.topicMembers.get(topic);
      if (!members) this.topicMembers.set(topic, (members = new Set()));
      members.add(client);
    }
  }

  unsubscribe(client: StreamClient, key: string): void {
    const sub = client.subs.get(key);
    if (!sub) return;
    client.subs.delete(key);
    const set = this.byKey.get(key);
    set?.delete(client);
    if (set?.size === 0) this.byKey.delete(key);
    if (client.sink.topics) {
      const topic = topicOf(sub);
      if (!client.closed) client.sink.topics.unsubscribe(topic);
      const members = this.topicMembers.get(topic);
      members?.delete(client);
      if (members?.size === 0) this.topicMembers.delete(topic);
    }
  }

  disconnect(client: StreamClient): void {
    if (client.closed) return;
    client.closed = true;
    for (const key of [...client.subs.keys()]) this.unsubscribe(client, key);
    client.subs.clear();
    client.pending = null;
    this.clients.delete(client);
  }

  /**
   * Replays what `client` missed after `lastId` on its current subscriptions, then whatever went
   * live meanwhile. Call right after subscribing.
   */
  async resume(client: StreamClient, lastId: string): Promise<void> {
    if (!/^\d{1,18}$/.test(lastId) || client.closed) return;
    client.pending = [];
    if (this.refresh) await this.refresh;
    const until = this.started;
    const replayed = new Set<string>();
    try {
      const rows = await readMissedEvents(this.services, lastId, until, [...client.subs.keys()]);
      for (const row of rows) {
        if (client.closed) return;
        const targets = row.streams.flatMap((k) => {
          const sub = client.subs.get(k);
          return sub ? [{ client, sub }] : [];
        });
        await this.deliver(row, targets, client);
        replayed.add(row.id);
      }
    } finally {
      const pending = client.pending ?? [];
      client.pending = null;
      for (const p of pending) {
        if (client.closed) break;
        if (replayed.has(p.id)) continue;
        if (!client.sink.write(p.frame)) this.disconnect(client);
      }
    }
  }
}

/** The hub of the process serving `services`' streaming clients (set by the composition root). */
const hubs = new WeakMap<Services, StreamingHub>();

export function setStreamingHub(services: Services, hub: StreamingHub | null): void {
  if (hub) hubs.set(services, hub);
  else hubs.delete(services);
}

export function streamingHubOf(services: Services): StreamingHub | null {
  return hubs.get(services) ?? null;
}
