import pg from 'pg';
import type { JobLogger } from './queue.ts';

/**
 * Wake-ups for worker pools. Every enqueue() sends `NOTIFY roost_jobs, '<queue>'` in the same
 * statement as its INSERT, so the notification is delivered when — and only if — the enqueuing
 * transaction commits (an enqueue in a rolled-back transaction wakes nobody). Listening needs a
 * session that stays open, which the pooled `Sql` interface cannot offer, so the composition
 * root hands worker pools `pgNotifyListener(connectionString)`: one dedicated connection per
 * process doing LISTEN, reconnecting on its own (the embedded server and an operator's alike).
 *
 * Without a listener, pools poll (pollIntervalMs); with one, polling is only the safety net.
 */
export interface JobNotifyListener {
  /**
   * Calls onNotify(payload) for each notification on channel, and onNotify(undefined) when
   * notifications may have been missed (after a reconnect). Resolves once listening, with the
   * function that stops it.
   */
  subscribe(channel: string, onNotify: (payload: string | undefined) => void): Promise<() => Promise<void>>;
}

export interface PgNotifyListener extends JobNotifyListener {
  close(): Promise<void>;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Listener over a PostgreSQL server: one dedicated connection (not from the pool) doing LISTEN.
 * On a lost connection it reconnects with backoff, re-LISTENs and calls every subscriber with
 * undefined so pools re-check the queue.
 */
export function pgNotifyListener(
  config: string | pg.ClientConfig,
  options: { log?: JobLogger; reconnectDelayMs?: number; maxReconnectDelayMs?: number } = {},
): PgNotifyListener {
  const log = options.log;
  const baseDelay = options.reconnectDelayMs ?? 500;
  const maxDelay = options.maxReconnectDelayMs ?? 30_000;
  const subscribers = new Map<string, Set<(payload: string | undefined) => void>>();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  let failures = 0;
  let closed = false;

  const dispatch = (channel: string, payload: string | undefined) => {
    for (const fn of subscribers.get(channel) ?? []) {
      try {
        fn(payload);
      } catch (error) {
        log?.error({ err: error, channel }, 'job notify subscriber threw');
      }
    }
  };

  const lost = (c: pg.Client, error?: unknown) => {
    if (client !== c) return;
    client = null;
    c.removeAllListeners();
    c.on('error', () => {});
    c.end().catch(() => {});
    if (closed) return;
    log?.warn({ err: error }, 'job notify connection lost; reconnecting');
    scheduleReconnect();
  };

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    const delay = Math.min(maxDelay, baseDelay * 2 ** Math.min(failures, 16));
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      ensureConnected().then(
        () => {
          for (const channel of subscribers.keys()) dispatch(channel, undefined);
        },
        () => {},
      );
    }, delay);
    reconnectTimer.unref?.();
  };

  const ensureConnected = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    if (connecting) return connecting;
    connecting = (async () => {
      const c = new pg.Client(typeof config === 'string' ? { connectionString: config } : config);
      c.on('error', (error) => lost(c, error));
      c.on('end', () => lost(c));
      c.on('notification', (msg) => dispatch(msg.channel, msg.payload));
      try {
        await c.connect();
        for (const channel of subscribers.keys()) await c.query(`LISTEN ${quoteIdent(channel)}`);
      } catch (error) {
        c.removeAllListeners();
        c.on('error', () => {});
        c.end().catch(() => {});
        failures++;
        if (!closed) {
          log?.warn({ err: error }, 'job notify connection failed; retrying');
          scheduleReconnect();
        }
        throw error;
      }
      if (closed) {
        await c.end().catch(() => {});
        throw new Error('listener closed');
      }
      failures = 0;
      client = c;
      return c;
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  return {
    async subscribe(channel, onNotify) {
      if (closed) throw new Error('listener closed');
      let set = subscribers.get(channel);
      const isNew = !set;
      if (!set) subscribers.set(channel, (set = new Set()));
      set.add(onNotify);
      const c = await ensureConnected();
      // A connection made before this channel was added does not LISTEN to it yet.
      if (isNew) await c.query(`LISTEN ${quoteIdent(channel)}`);
      return async () => {
        const current = subscribers.get(channel);
        if (!current?.delete(onNotify) || current.size > 0) return;
        subscribers.delete(channel);
        await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => {});
      };
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      subscribers.clear();
      await connecting?.catch(() => {});
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
    },
  };
}
