/**
 * The topic hub of one process: connections (WebSocket or SSE) subscribe to stream keys
 * (src/streaming/streams.ts); events arrive as streaming_events rows (src/streaming/store.ts),
 * announced by NOTIFY and read by id whichever process wrote them, and go to every subscription
 * of their keys, in id order, each exactly once.
 *
 * Per subscriber, a status event (update, status.update) is dropped when the subscriber blocks or
 * mutes its author or a mentioned account, blocks the author's domain, or is blocked by the author,
 * then passed to the filter hook (src/streaming/filters.ts) once per subscribed account that has
 * filters. Both cost what the exceptions cost, not what the audience does: one statement asks who
 * must not see the author's statuses (index lookups by target: the author's blockers, muters,
 * domain blockers and blocked), intersected with the subscribers in memory; filter sets are cached
 * per account, and accounts without filters pass unasked.
 *
 * Fan-out: the WebSocket subscriptions of a key with the same `stream` array share a native topic
 * of the transport (uWS, in C++); a frame goes to a topic with one publish. Members who must not
 * get that frame (dropped, hidden, `filtered`, or waiting for a replay) are taken out of the topic
 * around the publish and served one by one, so one muter on a stream of 10,000 costs two topic
 * operations, not 10,000 sends from JavaScript.
 *
 * Resume: a connection that names the last event id it saw gets, before any live event, the rows
 * it missed on its streams (within the resume window), then the live events it would have got
 * meanwhile, each id once.
 */
import type { Services } from '../context.ts';
import type { JobNotifyListener } from '../jobs/notify.ts';
import { accountsHidingSql } from '../db/audience.ts';
import { accountsWithFilters, filterForSubscriber, forgetFilterSet, prefetchFilterSets, type StreamFilterContext, type StreamFilterVerdict } from './filters.ts';
import { lastStreamingEventId, readMissedEvents, readStreamingEventsAfter, STREAMING_CHANNEL, type StreamingEventRow } from './store.ts';
import type { ResolvedStream } from './streams.ts';

export interface StreamSink {
  /** 'ws' frames are Mastodon's JSON objects; 'sse' frames are `id:/event:/data:` blocks. */
  readonly format: 'ws' | 'sse';
  /** Writes a frame; false when the client is gone or was dropped (too slow). */
  write(text: string): boolean;
  /**
   * Native topics of the transport (WebSocket): frames every member gets alike are published once.
   * Leaving a topic must keep what was published to the socket before and is not written yet
   * (the hub takes members out of a topic for one publish, then puts them back).
   */
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

/** A native topic: the WebSocket subscriptions of one key with one `stream` array. */
interface Topic {
  readonly name: string;
  readonly stream: readonly string[];
  readonly members: Set<StreamClient>;
  /** account id → its members (the exceptions of an event are found by account). */
  readonly byAccount: Map<string, Set<StreamClient>>;
}

/** The subscriptions of one stream key. */
class KeySubscribers {
  /** The filter context of the key's statuses (a key has one: see resolveStream). */
  readonly context: StreamFilterContext;
  /** native topic name → topic */
  readonly topics = new Map<string, Topic>();
  /** Subscriptions written to one by one (no native topics: SSE). */
  readonly each = new Map<StreamClient, ResolvedStream>();
  constructor(context: StreamFilterContext) {
    this.context = context;
  }

  /** The distinct accounts subscribed to the key. */
  accounts(): Iterable<string> {
    if (this.each.size === 0 && this.topics.size === 1) return this.topics.values().next().value!.byAccount.keys();
    const out = new Set<string>();
    for (const t of this.topics.values()) for (const a of t.byAccount.keys()) out.add(a);
    for (const c of this.each.keys()) out.add(c.accountId);
    return out;
  }
}

/**
 * Who must not get a status event as it is: the accounts it is dropped for, and per filter
 * context the accounts whose filters hide it or warn (a verdict with `filtered`).
 */
interface Screening {
  readonly dropped: ReadonlySet<string>;
  readonly verdicts: ReadonlyMap<StreamFilterContext, ReadonlyMap<string, StreamFilterVerdict>>;
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

/** The frame `verdict` makes of a status event (null: none), or the shared one when it changes nothing. */
function screenedFrame(format: 'ws' | 'sse', row: StreamingEventRow, stream: readonly string[], verdict: StreamFilterVerdict | undefined, shared: string): string | null {
  if (verdict === undefined) return shared;
  if (verdict.hidden) return null;
  if (!verdict.filtered || verdict.filtered.length === 0) return shared;
  const status = JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
  return frameOf(format, row.id, stream, row.event, JSON.stringify({ ...status, filtered: verdict.filtered }));
}

export class StreamingHub {
  readonly services: Services;
  readonly listener: JobNotifyListener | null;
  readonly byKey = new Map<string, KeySubscribers>();
  readonly clients = new Set<StreamClient>();
  /** Clients replaying missed events (their live frames wait in `pending`). */
  readonly replaying = new Set<StreamClient>();
  /**
   * Every row up to this id has been delivered (its frames sent or queued), or is a hole not yet
   * seen. A resuming client replays up to here and no further: a row still on its way reaches it
   * live (it subscribed before resuming), so replaying that row too would send it twice.
   */
  delivered = '0';
  /** The row being delivered now, if any. */
  delivering: string | null = null;
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
    this.cursor = this.delivered = await lastStreamingEventId(this.services.db.sql);
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
        if (row.event === 'filters_changed') for (const key of row.streams) if (key.startsWith('user:')) forgetFilterSet(this.services, key.slice(5));
        this.delivering = row.id;
        try {
          await this.deliver(row);
        } finally {
          this.delivering = null;
        }
        if (id > BigInt(this.delivered)) this.delivered = row.id;
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

  /** Sends one live event to every subscription of its keys, except those who must not get it. */
  async deliver(row: StreamingEventRow): Promise<void> {
    const groups: KeySubscribers[] = [];
    for (const key of row.streams) {
      const group = this.byKey.get(key);
      if (group) groups.push(group);
    }
    if (groups.length === 0) return;
    const screening = await this.screen(row, groups);
    for (const group of groups) {
      const verdicts = screening?.verdicts.get(group.context);
      for (const topic of group.topics.values()) this.deliverToTopic(row, topic, screening, verdicts);
      if (group.each.size === 0) continue;
      const frames = new Map<string, string>();
      for (const [client, sub] of group.each) {
        if (client.closed || screening?.dropped.has(client.accountId)) continue;
        const fkey = `${client.sink.format}${sub.stream.join('\u0000')}`;
        let shared = frames.get(fkey);
        if (shared === undefined) frames.set(fkey, (shared = frameOf(client.sink.format, row.id, sub.stream, row.event, row.payload)));
        const frame = screenedFrame(client.sink.format, row, sub.stream, verdicts?.get(client.accountId), shared);
        if (frame !== null) this.send(client, row.id, frame);
      }
    }
  }

  /** One event to one native topic: one publish, and the members who get something else served apart. */
  deliverToTopic(row: StreamingEventRow, topic: Topic, screening: Screening | null, verdicts: ReadonlyMap<string, StreamFilterVerdict> | undefined): void {
    if (topic.members.size === 0) return;
    const frame = frameOf('ws', row.id, topic.stream, row.event, row.payload);
    // member → the frame it gets instead of the published one (null: none).
    let apart: Map<StreamClient, string | null> | null = null;
    if (screening !== null) {
      // Each side walked from the smaller: the exceptions, or the topic's accounts (a user stream has one).
      for (const accountId of topic.byAccount.size < screening.dropped.size ? topic.byAccount.keys() : screening.dropped) {
        const members = screening.dropped.has(accountId) ? topic.byAccount.get(accountId) : undefined;
        if (members) for (const client of members) (apart ??= new Map()).set(client, null);
      }
      if (verdicts && verdicts.size > 0) {
        for (const accountId of topic.byAccount.size < verdicts.size ? topic.byAccount.keys() : verdicts.keys()) {
          const verdict = verdicts.get(accountId);
          const members = verdict ? topic.byAccount.get(accountId) : undefined;
          if (!members || screening.dropped.has(accountId)) continue;
          const own = screenedFrame('ws', row, topic.stream, verdict, frame);
          for (const client of members) (apart ??= new Map()).set(client, own);
        }
      }
    }
    for (const client of this.replaying) if (topic.members.has(client) && !apart?.has(client)) (apart ??= new Map()).set(client, frame);
    if (this.publisher === null) {
      for (const client of topic.members) {
        const own = apart?.has(client) ? apart.get(client)! : frame;
        if (own !== null) this.send(client, row.id, own);
      }
      return;
    }
    if (apart === null) {
      this.publisher(topic.name, frame);
      return;
    }
    if (apart.size < topic.members.size) {
      // Published past the members served apart: out of the topic for this one publish.
      for (const client of apart.keys()) client.sink.topics!.unsubscribe(topic.name);
      this.publisher(topic.name, frame);
      for (const client of apart.keys()) client.sink.topics!.subscribe(topic.name);
    }
    for (const [client, own] of apart) if (own !== null) this.send(client, row.id, own);
  }

  /** A live frame to one client: held while it replays, else written (a client too slow is dropped). */
  send(client: StreamClient, id: string, frame: string): void {
    if (client.closed) return;
    if (client.pending !== null) client.pending.push({ id, frame });
    else if (!client.sink.write(frame)) this.disconnect(client);
  }

  /** For a status event: who it is dropped for and the filter verdicts of the subscribed accounts; null for other events. */
  async screen(row: StreamingEventRow, groups: readonly KeySubscribers[]): Promise<Screening | null> {
    if (!STATUS_EVENTS.has(row.event) || row.authorId === null) return null;
    const dropped = await this.droppedFor(row);
    const accounts = groups.length === 1 ? groups[0].accounts() : new Set(groups.flatMap((g) => [...g.accounts()]));
    const kept: string[] = [];
    for (const a of accounts) if (!dropped.has(a)) kept.push(a);
    const verdicts = new Map<StreamFilterContext, Map<string, StreamFilterVerdict>>();
    if (kept.length === 0) return { dropped, verdicts };
    await prefetchFilterSets(this.services, kept);
    const filtering = accountsWithFilters(this.services, kept);
    if (filtering.length === 0) return { dropped, verdicts };
    const status = JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
    for (const group of groups) {
      if (verdicts.has(group.context)) continue;
      const of = new Map<string, StreamFilterVerdict>();
      verdicts.set(group.context, of);
      for (const accountId of filtering) {
        const verdict = await filterForSubscriber(this.services, accountId, status, group.context);
        if (verdict.hidden || (verdict.filtered && verdict.filtered.length > 0)) of.set(accountId, verdict);
      }
    }
    return { dropped, verdicts };
  }

  /**
   * The accounts that must not see this status event: who blocks or mutes its author or a
   * mentioned account, blocks the author's domain, or is blocked by the author (never the author).
   * Asked by target (indexes on target_account_id and domain), so it costs the author's blockers,
   * not the audience; the caller intersects with whoever is subscribed.
   */
  async droppedFor(row: StreamingEventRow): Promise<Set<string>> {
    const rows = await this.services.db.sql.query<{ id: string }>(
      `select h.id::text as id from (${accountsHidingSql('$1::bigint[]', '$2::bigint', '$3::text', '$4')}) h (id)`,
      [[row.authorId, ...row.mentionIds], row.authorId, row.authorDomain, this.services.clock.now()],
    );
    const out = new Set<string>();
    for (const r of rows) if (r.id !== row.authorId) out.add(r.id);
    return out;
  }

  /** Streaming connections held or being opened, per account (streaming.maxConnectionsPerAccount). */
  readonly slots = new Map<string, number>();

  /**
   * Takes one of `accountId`'s streaming connections (WebSocket and SSE together, in this process)
   * before it is opened: null when the account holds its maximum already, else the release, to call
   * once the connection ends or never opens (a second call does nothing).
   */
  reserve(accountId: string): (() => void) | null {
    const held = this.slots.get(accountId) ?? 0;
    if (held >= this.services.config.streaming.maxConnectionsPerAccount) return null;
    this.slots.set(accountId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.slots.get(accountId) ?? 1) - 1;
      if (n <= 0) this.slots.delete(accountId);
      else this.slots.set(accountId, n);
    };
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
            this.cursor = this.delivered = id;
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
    let group = this.byKey.get(sub.key);
    if (!group) this.byKey.set(sub.key, (group = new KeySubscribers(sub.context)));
    if (!client.sink.topics) {
      group.each.set(client, sub);
      return;
    }
    const name = topicOf(sub);
    let topic = group.topics.get(name);
    if (!topic) group.topics.set(name, (topic = { name, stream: sub.stream, members: new Set(), byAccount: new Map() }));
    client.sink.topics.subscribe(name);
    topic.members.add(client);
    const same = topic.byAccount.get(client.accountId);
    if (same) same.add(client);
    else topic.byAccount.set(client.accountId, new Set([client]));
  }

  unsubscribe(client: StreamClient, key: string): void {
    const sub = client.subs.get(key);
    if (!sub) return;
    client.subs.delete(key);
    const group = this.byKey.get(key);
    if (!group) return;
    if (client.sink.topics) {
      const name = topicOf(sub);
      if (!client.closed) client.sink.topics.unsubscribe(name);
      const topic = group.topics.get(name);
      if (topic?.members.delete(client)) {
        const same = topic.byAccount.get(client.accountId)!;
        same.delete(client);
        if (same.size === 0) topic.byAccount.delete(client.accountId);
        if (topic.members.size === 0) group.topics.delete(name);
      }
    } else {
      group.each.delete(client);
    }
    if (group.topics.size === 0 && group.each.size === 0) this.byKey.delete(key);
  }

  disconnect(client: StreamClient): void {
    if (client.closed) return;
    client.closed = true;
    for (const key of [...client.subs.keys()]) this.unsubscribe(client, key);
    client.subs.clear();
    client.pending = null;
    this.replaying.delete(client);
    this.clients.delete(client);
  }

  /**
   * Replays what `client` missed after `lastId` on its current subscriptions, then whatever went
   * live meanwhile. Call right after subscribing.
   */
  async resume(client: StreamClient, lastId: string): Promise<void> {
    if (!/^\d{1,18}$/.test(lastId) || client.closed) return;
    client.pending = [];
    this.replaying.add(client);
    const replayed = new Set<string>();
    try {
      if (this.refresh) await this.refresh;
      // Up to what has been delivered, less the rows that will still come live: the holes (a late
      // commit is delivered when it shows) and the row on its way now.
      const until = this.delivered;
      const live = [...this.holes.keys()];
      if (this.delivering !== null) live.push(this.delivering);
      const rows = await readMissedEvents(this.services, lastId, until, [...client.subs.keys()], live);
      for (const row of rows) {
        if (client.closed) return;
        await this.replay(row, client);
        replayed.add(row.id);
      }
    } finally {
      const pending = client.pending ?? [];
      client.pending = null;
      this.replaying.delete(client);
      for (const p of pending) {
        if (client.closed) break;
        if (replayed.has(p.id)) continue;
        if (!client.sink.write(p.frame)) this.disconnect(client);
      }
    }
  }

  /** One missed event to one replaying client, on each of its subscriptions the event is on. */
  async replay(row: StreamingEventRow, client: StreamClient): Promise<void> {
    const subs = row.streams.flatMap((k) => client.subs.get(k) ?? []);
    if (subs.length === 0) return;
    const groups = subs.map((s) => {
      const group = new KeySubscribers(s.context);
      group.each.set(client, s);
      return group;
    });
    const screening = await this.screen(row, groups);
    if (screening?.dropped.has(client.accountId)) return;
    for (const sub of subs) {
      if (client.closed) return;
      const shared = frameOf(client.sink.format, row.id, sub.stream, row.event, row.payload);
      const frame = screenedFrame(client.sink.format, row, sub.stream, screening?.verdicts.get(sub.context)?.get(client.accountId), shared);
      if (frame !== null && !client.sink.write(frame)) this.disconnect(client);
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
