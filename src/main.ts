/**
 * Composition root: config → logger → database → federation → job workers → HTTP.
 * `startRoost` is what `roost start` runs and what tests start, several per process if they like.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type pino from 'pino';
import type { RoostConfig, LogLevel } from '../config/index.ts';
import { loadOrCreateSecrets } from '../config/secrets.ts';
import type { Services } from './context.ts';
import { openDatabase } from './db/orm.ts';
import { startStallDetector } from './db/stall.ts';
import { createIdGenerator } from './lib/snowflake.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createLogger, forgetInstanceLog, inInstanceLog, routeFedifyLogs } from './log.ts';
import { lockDataDir, type DataDirLock } from './control/lock.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.ts';
import { upgradeFromPglite } from './db/pglite-upgrade.ts';
import { startControlSocket } from './control/socket.ts';
import { checkDatabaseChoice, recordDatabaseChoice } from './control/database-choice.ts';
import { checkInstanceDomain } from './control/domain.ts';
import { createRoostFederation, FEDIFY_QUEUE_RETRY, inboxFastPath, type RoostFederation } from './federation/index.ts';
import { guardInbox, MAX_INBOX_BYTES } from './federation/inbox-guard.ts';
import { unknownActorDeleteGate } from './federation/inbox/unknown-delete.ts';
import { forwardedCreateGate } from './federation/inbox/forwarded.ts';
import { fedifyMessageAllowed } from './federation/outbound-policy.ts';
import { PostgresKvStore } from './jobs/fedify-kv.ts';
import { PostgresMessageQueue } from './jobs/fedify-mq.ts';
import { exponentialBackoff, startWorkers } from './jobs/queue.ts';
import { pgNotifyListener, type JobNotifyListener } from './jobs/notify.ts';
import { federateConsumer } from './effects/federate.ts';
import { eventJobHandler, type EventJobOptions } from './effects/registry.ts';
import { mailConsumer } from './effects/mail.ts';
import { watchIpBlocks } from './services/ip-blocks.ts';
import { homeFeedConsumer } from './effects/home-feeds.ts';
import { scheduleTrendsRefresh } from './services/trends.ts';
import { trendsConsumer } from './effects/trends.ts';
import { conversationsConsumer } from './effects/conversations.ts';
import { notificationsConsumer } from './effects/notifications.ts';
import { streamingConsumer, streamingNotificationSink } from './effects/streaming.ts';
import { setStreamingHub, StreamingHub } from './streaming/hub.ts';
import { streamingRoutes, streamingWebSocketRoute } from './streaming/routes.ts';
import { metricsRoutes } from './api/metrics.ts';
import { Router } from './http/index.ts';
import { EVENT_JOB, TIMER_JOB, type OutboxRecord, type TimerEvent } from './events/timers.ts';
import { handleTimer } from './services/timers.ts';
import { setRemoteAccountResolver } from './services/remote-mentions.ts';
import { lookupRemoteAccount } from './federation/lookup.ts';
import { fetchThread } from './federation/threads.ts';
import { THREAD_FETCH_JOB, THREAD_FETCH_QUEUE, type ThreadFetchJob } from './services/threads.ts';
import { createDomainPolicy } from './services/domain-policy.ts';
import { MOVE_FOLLOWERS_JOB, migrateFollowersJob, type MoveFollowersJob } from './services/moves.ts';
import { VERIFY_LINKS_JOB, verifyAccountLinks } from './services/link-verification.ts';
import { MEDIA_PROCESS_JOB, MEDIA_QUEUE, processQueuedMedia } from './services/media.ts';
import { sweepMediaWorkDirs } from './services/media-av.ts';
import { FETCH_CARD_JOB, fetchPreviewCard } from './services/preview-cards.ts';
import { ListenError, startHttpServer } from './http/index.ts';
import { prepareUploadDir } from './http/upload-files.ts';
import { buildRouter } from './api/routes.ts';
import { trustedProxies } from './lib/client-address.ts';
import { createOutboundTransport, originKey } from './federation/transport.ts';
import { ACTOR_GONE_JOB, startDeliveryWorkers } from './federation/delivery.ts';
import { deleteRemoteAccount } from './services/accounts.ts';
import { WEBHOOK_JOB, WEBHOOK_QUEUE, closeWebhookConnections, webhookJobHandler, webhooksConsumer } from './effects/webhooks.ts';
import { PUSH_JOB, PUSH_QUEUE, closePushConnections, pushJobHandler, pushNotificationSink } from './push/index.ts';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/**
 * How often an idle job pool looks at the queue when nothing woke it. LISTEN/NOTIFY wakes pools on
 * every commit that queues work, and a pool computes the next scheduled run_at itself, so this
 * only bounds how long a lost notification can delay a job (an idle instance polled 4 times a
 * second with 1 s).
 */
export const SAFETY_NET_POLL_MS = 30_000;

/** Push deliveries in flight per process (src/push/delivery.ts). */
export const PUSH_CONCURRENCY = 32;
/** Threads walked at once by one process (src/federation/threads.ts). */
export const THREAD_FETCH_CONCURRENCY = 2;
/** Admin webhook deliveries in flight per process (src/effects/webhooks.ts). */
export const WEBHOOK_CONCURRENCY = 16;

export interface OpenOptions {
  /** A logger already made (startRoost makes one before it binds the port). */
  log?: Logger;
  logLevel?: LogLevel;
  logDestination?: pino.DestinationStream;
  /** Run pending migrations on open (default true). */
  migrate?: boolean;
  /** When the embedded PostgreSQL stops while Roost runs (default: log and exit the process). */
  onDatabaseExit?: (how: { code: number | null; signal: NodeJS.Signals | null }) => void;
  clock?: Clock;
  /** Name resolution for outbound fetches (tests simulate DNS with it). */
  dnsLookup?: Services['dnsLookup'];
  /** The lab's virtual network and signature clock (src/context.ts). */
  network?: Services['network'];
  signatureClock?: Services['signatureClock'];
  observe?: Services['observe'];
  retryJitter?: Services['retryJitter'];
}

export interface RoostServices {
  services: Services;
  /** The database's URL: the operator's server, or the embedded one's socket. */
  databaseUrl: string;
  close(): Promise<void>;
}

/** The database and services without the HTTP server: what the CLI needs. */
export async function openRoostServices(config: RoostConfig, opts: OpenOptions = {}): Promise<RoostServices> {
  const log = opts.log ?? createLogger(opts.logLevel ?? config.logLevel, opts.logDestination, config.logFormat);
  checkDatabaseChoice(config.dataDir, config.databaseUrl);
  const secrets = loadOrCreateSecrets(config.dataDir);
  let lock: DataDirLock | undefined;
  let embedded: EmbeddedPostgres | undefined;
  if (!config.databaseUrl) lock = lockDataDir(config.dataDir);
  try {
    if (!config.databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log, runAs: config.embeddedDatabaseUser });
      void embedded.exited.then((how) => {
        if (how.expected) return;
        log.fatal({ code: how.code, signal: how.signal }, 'the embedded PostgreSQL stopped while Roost was running; Roost stops');
        (opts.onDatabaseExit ?? (() => process.exit(1)))(how);
      });
    }
    const db = await openDatabase({ databaseUrl: config.databaseUrl ?? embedded!.url, log, poolMax: config.databasePoolMax });
    if (opts.migrate !== false) {
      await db.migrate();
      if (embedded) await upgradeFromPglite(config.dataDir, embedded.url, log);
      await checkInstanceDomain(db.sql, config.domain, config.databaseUrl ? 'ROOST_DATABASE_URL' : config.dataDir);
      recordDatabaseChoice(config.dataDir, config.databaseUrl);
    }
    const clock = opts.clock ?? systemClock;
    const services: Services = {
      config,
      secrets,
      db,
      clock,
      ids: createIdGenerator(() => clock.now()),
      log,
      domainPolicy: createDomainPolicy(db, { mode: config.federation.mode, localDomain: config.domain }),
      version: VERSION,
      dnsLookup: opts.dnsLookup,
      network: opts.network,
      signatureClock: opts.signatureClock,
      observe: opts.observe,
      retryJitter: opts.retryJitter,
    };
    return {
      services,
      databaseUrl: config.databaseUrl ?? embedded!.url,
      async close() {
        await db.close();
        await embedded?.stop();
        lock?.release();
      },
    };
  } catch (e) {
    await embedded?.stop();
    lock?.release();
    throw e;
  }
}

/**
 * The instance's Fedify federation on its database (KV store and message queue on the jobs
 * table). Its queue runs only where startRoost starts it: a CLI process that builds one to find
 * remote accounts leaves what it sends queued for the server.
 */
export function federationOn(services: Services, listener?: JobNotifyListener): RoostFederation {
  const kv = new PostgresKvStore(services.db.sql, { clock: services.clock });
  const queue = new PostgresMessageQueue(services.db.sql, {
    clock: services.clock,
    log: services.log,
    listener,
    ...FEDIFY_QUEUE_RETRY,
    ...(services.retryJitter === undefined ? {} : { backoff: exponentialBackoff({ baseMs: 1_000, factor: 2, maxMs: 12 * 3600_000, jitter: services.retryJitter }) }),
    // With LISTEN/NOTIFY waking it, the poll is a safety net; without a listener (a CLI process), the queue does not run.
    pollIntervalMs: listener ? SAFETY_NET_POLL_MS : undefined,
    // Deliveries to and work from servers blocked since they were queued are dropped.
    accept: async (message) => fedifyMessageAllowed(await services.domainPolicy.snapshot(), message),
  });
  return createRoostFederation({ services, kv, queue });
}

export interface StartOptions extends OpenOptions {
  /** Listen on an OS-chosen port and derive domain and public URL from it (tests, the lab). */
  domainFromPort?: boolean;
  /** Whether to open the control socket (default: on for the embedded database). */
  controlSocket?: boolean;
  /**
   * What this process does (`roost start --role`): web serves the REST API and federation, worker
   * runs the job workers (outbox effects, deliveries, Fedify's queue), streaming serves the
   * streaming API. Default: all three. Several processes on one PostgreSQL split the work; streaming
   * events cross processes through the streaming_events table and LISTEN/NOTIFY.
   */
  roles?: readonly Role[];
  /** Called before each outbox consumer runs on a fact (src/effects/registry.ts EventJobOptions). */
  beforeConsumer?: EventJobOptions['beforeConsumer'];
}

export type Role = 'web' | 'worker' | 'streaming';
export const ROLES: readonly Role[] = ['web', 'worker', 'streaming'];

export interface RunningRoost {
  /** The configuration the instance runs with (with domainFromPort: its port, domain and URL). */
  config: RoostConfig;
  services: Services;
  federation: RoostFederation;
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Starts an instance. The configuration is read, never changed: with `domainFromPort`, a free
 * port is found first and the instance runs with a copy of the configuration naming that port,
 * its domain and public URL, so everything (services, federation, router) is built once, for
 * its real URL. Another process taking the port in between is retried with a new one.
 */
export async function startRoost(config: RoostConfig, opts: StartOptions = {}): Promise<RunningRoost> {
  if (!opts.domainFromPort) return startOn(config, opts);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(config.host);
    const domain = `${config.host}:${port}`;
    const own: RoostConfig = { ...config, port, domain, publicUrl: `http://${domain}` };
    try {
      return await startOn(own, opts);
    } catch (e) {
      if (attempt < 5 && e instanceof ListenError) continue;
      throw e;
    }
  }
}

/** A port the OS says is free on `host` now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Where uploads are written while they arrive (temporary files, removed once answered). */
function uploadDir(config: RoostConfig): string {
  return path.join(config.dataDir, 'tmp', 'uploads');
}

/** The instance's listen and public origins, as its outbound transport compares them. */
function ownOrigins(config: RoostConfig, port: number): string[] {
  const pub = new URL(config.publicUrl);
  return [originKey(config.host, port, 'http:'), originKey(pub.hostname, pub.port, pub.protocol)];
}

async function startOn(config: RoostConfig, opts: StartOptions): Promise<RunningRoost> {
  const t0 = performance.now();
  const log = opts.log ?? createLogger(opts.logLevel ?? config.logLevel, opts.logDestination, config.logFormat);
  // The port first: a port in use stops the start before the data directory or database is
  // touched. Until the app is built and handed over (http.serve below) every request gets a 503.
  const roles = new Set<Role>(opts.roles ?? ROLES);
  let servicesOnceOpen: Services | null = null;
  const http = await startHttpServer({
    ws: roles.has('streaming') ? [streamingWebSocketRoute(() => servicesOnceOpen)] : [],
    host: config.host,
    port: config.port,
    log,
    publicUrl: config.publicUrl,
    maxBodyBytes: config.bodyLimits.maxBodyBytes,
    bodyTimeoutMs: config.bodyLimits.timeoutSeconds * 1000,
    // The inbox takes what its guard takes (src/federation/inbox-guard.ts).
    fallbackMaxBodyBytes: MAX_INBOX_BYTES,
    bodyBudget: {
      unauthenticatedBytes: config.bodyLimits.unauthenticatedBudgetBytes,
      perAddress: config.bodyLimits.concurrentBodiesPerAddress,
    },
    // Multipart file parts as they arrive (made below, once the data directory is open).
    uploadDir: uploadDir(config),
    trustedProxies: trustedProxies(config.trustedProxies),
  });
  let opened: RoostServices;
  try {
    opened = await openRoostServices(config, { ...opts, log });
  } catch (e) {
    await http.close({ drainMs: 0 });
    throw e;
  }
  const { services } = opened;
  try {
    await prepareUploadDir(uploadDir(config));
    await sweepMediaWorkDirs(config.dataDir);
  } catch (e) {
    await http.close({ drainMs: 0 });
    await opened.close();
    throw e;
  }
  routeFedifyLogs(log);
  // Everything this instance runs (requests Fedify answers, its queues, effects) runs inside its
  // log scope, so Fedify's records reach this instance's logger (src/log.ts).
  const scoped = <T>(fn: () => T): T => inInstanceLog(log, fn);
  const stops: (() => Promise<void>)[] = [() => http.close({ drainMs: 5000 })];
  try {
    if (config.databaseStallSeconds > 0) {
      const detector = startStallDetector({
        tracker: services.db.tracker,
        log,
        thresholdMs: config.databaseStallSeconds * 1000,
        databaseUrl: opened.databaseUrl,
        pool: () => services.db.pool,
      });
      stops.push(async () => detector.stop());
    }
    // Idle workers wake on NOTIFY, over one dedicated LISTEN connection.
    const listener = pgNotifyListener(opened.databaseUrl, { log: log.child({ module: 'jobs' }) });
    if ('close' in listener) stops.push(() => (listener as { close(): Promise<void> }).close());
    const federation = federationOn(services, listener);
    // The IP blocks every request is checked against: loaded now, dropped on a change's NOTIFY.
    stops.push(await watchIpBlocks(services, (channel, onNotify) => listener.subscribe(channel, onNotify)));
    // Unknown remote mentions in local posts are resolved through the federation's bounded lookup.
    setRemoteAccountResolver(services, (username, domain, signal) => lookupRemoteAccount(services, federation, `${username}@${domain}`, { signal }));
    stops.push(async () => setRemoteAccountResolver(services, null));
    if (roles.has('streaming')) {
      // Subscribed before anything opens a transaction (PGlite: LISTEN would join it).
      const hub = new StreamingHub(services, listener);
      // Frames every subscriber of a stream gets alike go out once, fanned out by uWS in C++.
      hub.publisher = (topic, frame) => http.publish(topic, frame);
      await hub.start();
      setStreamingHub(services, hub);
      servicesOnceOpen = services;
      stops.push(async () => {
        setStreamingHub(services, null);
        await hub.stop();
      });
    }
    if (roles.has('worker')) {
    const abort = new AbortController();
    const queueRunning = scoped(() => federation.startQueue(undefined, { signal: abort.signal }));
    stops.push(async () => {
      abort.abort();
      await queueRunning.catch(() => undefined);
    });

    // Streaming after the home-feed fan-out: it reads whose feeds got a status. New notifications,
    // rendered once per recipient through its filters, go to its streams and its Web Push subscriptions.
    // Every consumer of the outbox (src/events/consumers.ts), each retried on its own.
    const handleEvent = eventJobHandler(
      services,
      {
        federate: federateConsumer(services, federation),
        'home-feeds': homeFeedConsumer(services),
        conversations: conversationsConsumer(services),
        streaming: streamingConsumer(services),
        notifications: notificationsConsumer(services, [streamingNotificationSink(services), pushNotificationSink(services)]),
        trends: trendsConsumer(services),
        mail: mailConsumer(services),
        webhooks: webhooksConsumer(services),
      },
      { beforeConsumer: opts.beforeConsumer },
    );
    // The lab turns the random spread of retries off (services.retryJitter), so one seed gives one trace.
    const retryBackoff = services.retryJitter === undefined ? undefined : exponentialBackoff({ jitter: services.retryJitter });
    const workers = scoped(() =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        backoff: retryBackoff,
        log,
        concurrency: 4,
        listener,
        // NOTIFY wakes the pool on every commit that queues work; polling is only a safety net.
        pollIntervalMs: SAFETY_NET_POLL_MS,
        handlers: {
          [EVENT_JOB]: handleEvent,
          [TIMER_JOB]: (payload: unknown) => handleTimer(services, payload as TimerEvent),
          [MOVE_FOLLOWERS_JOB]: async (payload: unknown) => void (await migrateFollowersJob(services, payload as MoveFollowersJob)),
          [VERIFY_LINKS_JOB]: async (payload: unknown) => void (await verifyAccountLinks(services, (payload as { accountId: string }).accountId)),
          // (queued on the media lane below; one left on this lane by an older Roost is still done)
          [MEDIA_PROCESS_JOB]: (payload: unknown) => processQueuedMedia(services, (payload as { mediaId: string }).mediaId),
          [FETCH_CARD_JOB]: async (payload: unknown) => void (await fetchPreviewCard(services, (payload as { statusId: string }).statusId)),
          // A remote actor's own inbox answered 410 Gone to a delivery: the actor is gone, as if
          // it had sent Delete(Person) (its follows end through their actors, then the row goes).
          [ACTOR_GONE_JOB]: async (payload: unknown) => {
            const { actorUri } = payload as { actorUri: string };
            if (await deleteRemoteAccount(services, actorUri)) log.info({ actorUri }, 'remote actor gone (410 on its inbox): removed');
          },
        },
      }),
    );
    stops.push(() => workers.stop());
    // Trend scores: the first refresh now, then each one schedules the next (services/trends.ts).
    if (config.trends.enabled) await scheduleTrendsRefresh(services, services.db.sql, 0);
    // Web Push (src/push/): its own lane, so a slow push service never holds up effects, and
    // more requests in flight than the default pool, as pushes mostly wait on the network.
    const pushWorkers = scoped(() =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        backoff: retryBackoff,
        log,
        queue: PUSH_QUEUE,
        concurrency: PUSH_CONCURRENCY,
        listener,
        pollIntervalMs: SAFETY_NET_POLL_MS,
        handlers: { [PUSH_JOB]: pushJobHandler(services) },
      }),
    );
    stops.push(async () => closePushConnections(services));
    stops.push(() => pushWorkers.stop());
    // Threads' missing replies (src/federation/threads.ts): a lane of their own, as each walk may
    // wait on slow servers for up to federation.threadFetchTimeoutSeconds.
    const threadWorkers = scoped(() =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        backoff: retryBackoff,
        log,
        queue: THREAD_FETCH_QUEUE,
        concurrency: THREAD_FETCH_CONCURRENCY,
        listener,
        pollIntervalMs: SAFETY_NET_POLL_MS,
        handlers: { [THREAD_FETCH_JOB]: (payload: unknown) => fetchThread(services, federation, payload as ThreadFetchJob) },
      }),
    );
    stops.push(() => threadWorkers.stop());
    // Admin webhooks (src/effects/webhooks.ts): a lane of their own, so a slow receiver never holds up effects.
    const webhookWorkers = scoped(() =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        backoff: retryBackoff,
        log,
        queue: WEBHOOK_QUEUE,
        concurrency: WEBHOOK_CONCURRENCY,
        listener,
        pollIntervalMs: SAFETY_NET_POLL_MS,
        handlers: { [WEBHOOK_JOB]: webhookJobHandler(services) },
      }),
    );
    stops.push(async () => closeWebhookConnections(services));
    stops.push(() => webhookWorkers.stop());
    // Video and audio transcodes (services/media-av.ts): their own lane, as many runners as ffmpeg
    // slots, so a long transcode never holds a runner of the default lane.
    const mediaWorkers = scoped(() =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        backoff: retryBackoff,
        log,
        queue: MEDIA_QUEUE,
        concurrency: config.media.transcodeConcurrency,
        listener,
        pollIntervalMs: SAFETY_NET_POLL_MS,
        handlers: { [MEDIA_PROCESS_JOB]: (payload: unknown) => processQueuedMedia(services, (payload as { mediaId: string }).mediaId) },
      }),
    );
    stops.push(() => mediaWorkers.stop());
    // Outgoing delivery (src/federation/delivery.ts): the priority lane and the bulk lane, through
    // this instance's own transport (its timeouts and address guard), closed after the lanes stop.
    const transport = createOutboundTransport({
      timeoutMs: config.federation.deliveryTimeoutSeconds * 1000,
      allowPrivateAddresses: config.federation.allowPrivateAddresses,
      ownOrigins: ownOrigins(config, http.port),
      lookup: services.dnsLookup,
      network: services.network,
      signatureClock: services.signatureClock,
      userAgent: `Roost/${VERSION} (+${config.publicUrl})`,
    });
    stops.push(() => transport.close());
    const deliveryContext = () => federation.createContext(new URL(config.publicUrl), undefined);
    const deliveryWorkers = scoped(() =>
      startDeliveryWorkers(services, deliveryContext, transport, { listener, pollIntervalMs: SAFETY_NET_POLL_MS }),
    );
    stops.push(() => Promise.all(deliveryWorkers.map((w) => w.stop())).then(() => undefined));
    }

    let router: Router;
    if (roles.has('web')) router = buildRouter(services, federation);
    else {
      // A streaming-only process serves the streaming endpoints alone (a worker-only one: nothing but
      // health); both serve /metrics, so each process's own figures (streaming clients, memory) can be scraped.
      router = new Router();
      if (roles.has('streaming')) streamingRoutes(router, services);
      else router.get('/api/v1/streaming/health', () => new Response('OK', { status: 200 }));
      metricsRoutes(router, services);
    }
    const forwardedCreate = forwardedCreateGate(services, federation);
    const signatureClock = services.signatureClock;
    const signatureNow = signatureClock ? () => signatureClock.now().getTime() : undefined;
    const fastInbox = inboxFastPath(federation);
    const unknownDelete = unknownActorDeleteGate(services);
    http.serve({
      router,
      // Deliveries signed with a key this process holds: verified and queued without a WHATWG
      // Request (src/federation/inbox-fast.ts); anything else (null) goes on to the fallback.
      preFallback: !roles.has('web') || !fastInbox ? undefined : (ctx) => scoped(() => fastInbox.handle(ctx)),
      // guardInbox: unsigned, oversized, too deep or foreign-context inbox POSTs, and those from servers the
      // domain policy refuses, stop here, before Fedify's JSON-LD work.
      fallback: !roles.has('web') ? undefined : (request: Request) =>
        scoped(async () =>
          (await guardInbox(request, (host) => services.domainPolicy.allowed(host), signatureNow)) ??
          // A Delete from an actor this server does not know: 202, dropped without fetching its key.
          (await unknownDelete(request)) ??
          // A Create forwarded by someone else than its actor: re-fetched from its origin (src/federation/inbox/forwarded.ts).
          (await forwardedCreate(request)) ??
          federation.fetch(request, {
            contextData: undefined,
            onNotFound: () => Response.json({ error: 'Record not found' }, { status: 404 }),
            onNotAcceptable: () => Response.json({ error: 'Not acceptable' }, { status: 406 }),
            // Authorized fetch (src/federation/authorized-fetch.ts): unsigned, unverifiable or refused.
            onUnauthorized: () => Response.json({ error: 'Request not signed or not authorized' }, { status: 401 }),
          }),
        ),
    });

    if (opts.controlSocket ?? !config.databaseUrl) {
      const control = await startControlSocket(services, { federation }, log.child({ module: 'control' }));
      stops.push(() => control.close());
    }

    for (const warning of config.warnings ?? []) log.warn(`configuration: ${warning}`);
    const url = config.publicUrl;
    log.info(
      { listen: `http://${config.host}:${http.port}`, url, database: config.databaseUrl ? 'server' : 'embedded', ms: Math.round(performance.now() - t0) },
      `Roost ${VERSION} listening on http://${config.host}:${http.port} (${url})`,
    );
    return {
      config,
      services,
      federation,
      port: http.port,
      url,
      async close() {
        // Stop taking requests and jobs first, then the database.
        for (const stop of stops.reverse()) await stop().catch((e) => log.error({ err: e }, 'shutdown step failed'));
        forgetInstanceLog(log);
        await opened.close();
      },
    };
  } catch (e) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await opened.close();
    throw e;
  }
}

export type { Logger };
