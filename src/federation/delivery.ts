/**
 * Outgoing delivery: Roost's own fan-out on the durable job queue, in place of Fedify's
 * per-inbox outbox messages.
 *
 * Why not Fedify's: with `fanout: 'auto'` (and ≥ 5 inboxes) Fedify's sendActivity writes one
 * fan-out message, and its fan-out worker then writes ONE OUTBOX MESSAGE PER INBOX, each of which
 * re-imports the sender's private key, re-parses the activity through JSON-LD and is claimed and
 * deleted as a row of its own: 10,000 followers without shared inboxes cost 10,000 queue rows and
 * 10,000 JSON-LD parses. Here:
 *
 *   send()     one job row per activity (recipients 'followers' are expanded by the worker, not at
 *              post time), in one of two lanes (queues): `delivery` for activities addressed to
 *              a few inboxes (Follow, Accept, Undo, Block, a reply to a remote author), and
 *              `delivery-bulk` for fan-outs. Each lane has its own worker pool (main.ts), so a
 *              follow or an accept never waits behind a fan-out of thousands.
 *   the job    expands the followers into inboxes (shared inboxes once), serialises the activity
 *              once and computes its digest once, then signs and POSTs each request (one
 *              signature per inbox, draft-cavage rsa-sha256) through the instance's outbound
 *              transport (./transport.ts: its timeouts, its address guard) with up to
 *              `federation.deliveryConcurrency` requests in flight;
 *   outcomes   2xx delivered; 410 from an actor's own inbox: the actor is gone (ACTOR_GONE_JOB,
 *              handled in the composition root through the follow store); other 4xx (but 408,
 *              429) given up; 429/503 retried no sooner than their Retry-After; 5xx and
 *              network failures retried with exponential backoff (1 s doubling to 12 h, 22
 *              rounds, about three days, as before);
 *   circuit    per host (table delivery_hosts): consecutive failed rounds are counted; past
 *              `circuitFailures` over `circuitSpanSeconds` the host is parked (no request at all)
 *              until a single probe is let through after `circuitProbeSeconds` (doubling); a
 *              success closes it;
 *   retries    the inboxes left are re-queued as a few job rows grouped by due time (a host
 *              parked or asking Retry-After gets its own); for an activity with an ordering key,
 *              one job per host keyed to that host, retried in place, and a later activity of the
 *              key (an Undo after its Follow, a Move after an Update) queues behind it for that
 *              host only: order holds per host, and a dead host holds up nobody else;
 *   state      table deliveries: per activity, inboxes / delivered / failed / pending
 *              (`roost deliveries ACTIVITY-ID`), and one log line per round.
 */
import { createHash, KeyObject } from 'node:crypto';
import { signJsonLd, signObject, type Context } from '@fedify/fedify';
import type { Activity, Recipient } from '@fedify/vocab';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { enqueue, enqueueMany, RescheduleJob, startWorkers, type EnqueueSpec, type Job, type JobWorkers } from '../jobs/queue.ts';
import type { JobNotifyListener } from '../jobs/notify.ts';
import { actorKeyPairs } from './fedify-seams.ts';
import type { OutboundTransport, SigningKey } from './transport.ts';
import { inboxesOf, remoteFollowers, type InboxTarget as Target } from './audience.ts';

export const DELIVERY_JOB = 'delivery';
/** The priority lane: activities for a few inboxes. */
export const PRIORITY_LANE = 'delivery';
/** The bulk lane: fan-outs to followers. */
export const BULK_LANE = 'delivery-bulk';
/** An activity to at most this many inboxes goes in the priority lane. */
export const PRIORITY_MAX_INBOXES = 4;
/** A remote actor whose own inbox answered 410 Gone (payload { actorUri }); default queue. */
export const ACTOR_GONE_JOB = 'delivery.actor_gone';

/** Retry schedule: 1 s doubling to 12 h, ±25 %, 22 rounds (about three days), as Mastodon keeps trying. */
export const DELIVERY_RETRY = { baseMs: 1_000, factor: 2, maxMs: 12 * 3600_000, jitter: 0.25, maxRounds: 22 } as const;

export interface DeliveryJob {
  activityId: string;
  activityType: string;
  /** The local sender's identifier (username). */
  sender: string;
  /** The activity, compact JSON-LD. */
  activity: unknown;
  /** Recipients still to expand: the remote accepted followers of this local account id. */
  followersOf?: string;
  /** With followersOf: more recipients' inboxes, merged with the followers' when expanded (one POST per inbox). */
  alsoInboxes?: Record<string, Target>;
  preferSharedInbox?: boolean;
  inboxes?: Record<string, Target>;
  /** Rounds already made for these inboxes. */
  round: number;
  /** Whether the deliveries row counted these inboxes already. */
  counted: boolean;
  orderingKey?: string;
}

export interface SendOptions {
  orderingKey?: string;
  preferSharedInbox?: boolean;
  /**
   * With recipients 'followers': more recipients in the same delivery, so that an inbox standing
   * for a follower and one of them (a shared inbox) gets the activity once.
   */
  also?: readonly Recipient[];
}

export type Recipients = 'followers' | Recipient | Recipient[];

/** inbox → the actors it stands for; shared inboxes once when preferred (Fedify's extractInboxes, without the fetches). */
export function extractInboxes(recipients: readonly Recipient[], preferSharedInbox: boolean): Record<string, Target> {
  const rows = recipients.flatMap((r) =>
    r.id ? [{ uri: r.id.href, inbox_url: r.inboxId?.href ?? null, shared_inbox_url: r.endpoints?.sharedInbox?.href ?? null }] : [],
  );
  return inboxesOf(rows, preferSharedInbox);
}

function laneOf(job: Pick<DeliveryJob, 'followersOf' | 'inboxes'>): string {
  if (job.followersOf) return BULK_LANE;
  return Object.keys(job.inboxes ?? {}).length <= PRIORITY_MAX_INBOXES ? PRIORITY_LANE : BULK_LANE;
}

/** `also`'s inboxes added to `into` (an inbox in both stands for the actors of both, once each). */
function mergeInboxes(into: Record<string, Target>, also: Record<string, Target> | undefined): Record<string, Target> {
  for (const [inbox, t] of Object.entries(also ?? {})) {
    const have = into[inbox];
    if (!have) into[inbox] = { actors: [...t.actors], shared: t.shared };
    else for (const actor of t.actors) if (!have.actors.includes(actor)) have.actors.push(actor);
  }
  return into;
}

/** Separates an ordering key from the host in the key of that host's ordered retries. */
const HOST_KEY = ' @host ';

/** How long the deliveries row of a settled activity is kept. */
export const DELIVERY_STATE_KEPT_MS = 14 * 86_400_000;

/** A bulk job writes its settled inboxes (delivery_checkpoints) every this many outcomes… */
export const CHECKPOINT_BATCH = 256;
/** …or every this many milliseconds, whichever comes first. */
export const CHECKPOINT_MS = 250;

/** Jobs of this kind count their own rounds; the queue's attempts only guard against crash loops. */
const JOB_MAX_ATTEMPTS = 1_000;

/**
 * Queues an activity from a local actor: one job row, whatever the number of recipients. Returns
 * the activity id, or null when there is nobody to send it to.
 */
export async function sendActivity(...args: Parameters<typeof prepareDelivery>): Promise<string | null> {
  const spec = await prepareDelivery(...args);
  if (!spec) return null;
  await enqueueDeliveries(args[0], [spec]);
  return (spec.payload as DeliveryJob).activityId;
}

/**
 * The delivery job of an activity from a local actor (signed with its object integrity proofs,
 * serialised once), not queued yet: null when there is nobody to send it to. Several of them are
 * queued together by enqueueDeliveries, in one statement, so a caller that prepares an activity's
 * deliveries and fails before queueing them queues nothing, and one that queued them is done
 * (the federate consumer under its own retry: effects/federate.ts).
 */
export async function prepareDelivery(
  services: Services,
  ctx: Context<void>,
  sender: string,
  recipients: Recipients,
  activity: Activity,
  opts: SendOptions = {},
): Promise<EnqueueSpec | null> {
  const id = activity.id;
  if (!id) throw new TypeError('an activity to deliver needs an id');
  // Object integrity proofs with the actor's Ed25519 key, as Fedify's sendActivity adds them.
  const keyPairs = await actorKeyPairs(ctx, sender);
  for (const kp of keyPairs) {
    if (kp.privateKey.algorithm.name !== 'Ed25519' || kp.multikeyId == null) continue;
    activity = await signObject(activity, kp.privateKey, kp.multikeyId, { contextLoader: ctx.contextLoader });
  }
  let json = await activity.toJsonLd({ format: 'compact', contextLoader: ctx.contextLoader });
  const type = (json as { type?: unknown }).type;
  // A public Create, Update, Delete or Announce also carries a linked-data signature
  // (RsaSignature2017) with the actor's RSA key, as Mastodon signs them: Mastodon forwards a reply
  // to its thread's followers, and a Delete to rebloggers' followers, only when it is there.
  if (typeof type === 'string' && LD_SIGNED_TYPES.has(type) && isPublic(json)) {
    const rsa = keyPairs.find((k) => k.privateKey.algorithm.name === 'RSASSA-PKCS1-v1_5');
    if (rsa) json = await signJsonLd(json, rsa.privateKey, rsa.keyId, { contextLoader: ctx.contextLoader });
  }
  const job: DeliveryJob = {
    activityId: id.href,
    activityType: typeof type === 'string' ? type : 'Activity',
    sender,
    activity: json,
    round: 0,
    counted: false,
    orderingKey: opts.orderingKey,
    preferSharedInbox: opts.preferSharedInbox ?? false,
  };
  if (recipients === 'followers') {
    const [account] = await services.db.sql.query<{ id: string }>(`select id::text as id from accounts where username = $1 and domain is null`, [sender]);
    if (!account) return null;
    job.followersOf = account.id;
    if (opts.also?.length) job.alsoInboxes = extractInboxes(opts.also, opts.preferSharedInbox ?? false);
  } else {
    job.inboxes = extractInboxes(Array.isArray(recipients) ? recipients : [recipients], opts.preferSharedInbox ?? false);
    if (Object.keys(job.inboxes).length === 0) return null;
  }
  return { queue: laneOf(job), kind: DELIVERY_JOB, payload: job, maxAttempts: JOB_MAX_ATTEMPTS, orderingKey: opts.orderingKey };
}

/** The activities Mastodon signs with a linked-data signature when they are public. */
const LD_SIGNED_TYPES = new Set(['Create', 'Update', 'Delete', 'Announce']);
const PUBLIC_IDS = new Set(['https://www.w3.org/ns/activitystreams#Public', 'as:Public', 'Public']);

/** Whether a compacted activity is addressed to the public (to or cc). */
function isPublic(json: unknown): boolean {
  const a = json as { to?: unknown; cc?: unknown };
  return [a.to, a.cc].flat().some((v) => typeof v === 'string' && PUBLIC_IDS.has(v));
}

/** Queues prepared deliveries (prepareDelivery) in one statement: all of them or none. */
export async function enqueueDeliveries(services: Services, specs: readonly EnqueueSpec[]): Promise<void> {
  if (specs.length === 0) return;
  if (services.observe) {
    for (const spec of specs) {
      const job = spec.payload as DeliveryJob;
      services.observe({ kind: 'queued', id: job.activityId, type: job.activityType, inboxes: job.followersOf ? 'followers' : Object.keys(job.inboxes ?? {}).length });
    }
  }
  if (specs.length === 1) await enqueue(services.db.sql, specs[0]!, { clock: services.clock });
  else await enqueueMany(services.db.sql, specs, { clock: services.clock });
}

/** The remote accepted followers of a local account, as inboxes (shared ones once when preferred). */
async function followerInboxes(sql: Sql, accountId: string, preferShared: boolean): Promise<Record<string, Target>> {
  return inboxesOf(await remoteFollowers(sql, accountId), preferShared);
}

/** Reorders inboxes in place so that consecutive ones are on different hosts where possible (round robin over hosts). */
export function interleaveByHost(inboxes: string[]): void {
  const byHost = new Map<string, string[]>();
  for (const inbox of inboxes) {
    const host = new URL(inbox).host;
    const list = byHost.get(host);
    if (list) list.push(inbox);
    else byHost.set(host, [inbox]);
  }
  const lists = [...byHost.values()];
  let i = 0;
  for (let round = 0; i < inboxes.length; round++) {
    for (const list of lists) if (round < list.length) inboxes[i++] = list[round]!;
  }
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), or null. */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value == null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP date names its day and month ("Wed, 21 Oct 2015 07:28:00 GMT"); Date.parse alone
  // would take "-5" for a year.
  if (!/^[A-Za-z]{3},? /.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

type Outcome =
  | { kind: 'delivered' }
  | { kind: 'failed'; status: number; gone: boolean }
  /** Retry at `at` (ms); hostFailure: counts against the host's circuit. */
  | { kind: 'later'; at: number; hostFailure: boolean; error: string };

function backoffMs(round: number, jitter: number = DELIVERY_RETRY.jitter): number {
  const { baseMs, factor, maxMs } = DELIVERY_RETRY;
  const raw = Math.min(maxMs, baseMs * factor ** Math.max(0, round - 1));
  return Math.round(raw * (1 + jitter * (2 * Math.random() - 1)));
}

interface HostRow {
  host: string;
  open_until: Date | string | null;
  probes: number;
}

const ms = (v: Date | string) => (v instanceof Date ? v : new Date(v)).getTime();

export interface DeliveryRunner {
  /** Handles one delivery job (a round). */
  run(job: DeliveryJob, row: Job): Promise<void>;
}

export function createDeliveryRunner(services: Services, ctx: () => Context<void>, transport: OutboundTransport): DeliveryRunner {
  const { config, clock } = services;
  const sql = services.db.sql;
  const log = services.log.child({ module: 'delivery' });
  const f = config.federation;

  /**
   * One signed POST through the instance's transport (./transport.ts: its bounds and its address
   * guard). `retryMs`: the round's backoff (one jitter per round, so retries group into few rows).
   */
  async function post(inbox: string, body: Uint8Array, digest: string, key: SigningKey, retryMs: number): Promise<Outcome> {
    const now = () => clock.now().getTime();
    try {
      const { status, retryAfter } = await transport.post({ inbox: new URL(inbox), body, digest, key });
      if (status >= 200 && status < 300) return { kind: 'delivered' };
      const error = `HTTP ${status}`;
      if (status === 429 || status === 503) {
        const asked = retryAfterMs(retryAfter, now());
        return { kind: 'later', at: now() + (asked ?? retryMs), hostFailure: status === 503, error };
      }
      if (status >= 400 && status < 500 && status !== 408) return { kind: 'failed', status, gone: status === 410 };
      return { kind: 'later', at: now() + retryMs, hostFailure: true, error };
    } catch (e) {
      return { kind: 'later', at: now() + retryMs, hostFailure: true, error: String((e as Error)?.message ?? e).slice(0, 300) };
    }
  }

  /** Records failed rounds; returns the hosts whose circuit is (now) open with their open_until. */
  async function hostsFailed(hosts: string[]): Promise<Map<string, number>> {
    if (hosts.length === 0) return new Map();
    const now = clock.now();
    const rows = await sql.query<{ host: string; open_until: Date | string | null; opened: boolean }>(
      `with up as (
         insert into delivery_hosts as h (host, failures, first_failure_at, last_failure_at, open_until)
         select x, 1, $2::timestamptz, $2::timestamptz,
                case when 1 >= $3::int and $4::int = 0 then $2::timestamptz + make_interval(secs => $5::int) end
           from unnest($1::text[]) x
         on conflict (host) do update set failures = h.failures + 1, last_failure_at = $2::timestamptz,
           open_until = case when h.open_until is not null then h.open_until
                             when h.failures + 1 >= $3::int and $2::timestamptz - h.first_failure_at >= make_interval(secs => $4::int)
                             then $2::timestamptz + make_interval(secs => $5::int) end
         returning h.host, h.open_until, h.probes
       ) select host, open_until, (open_until is not null and probes = 0) as opened from up`,
      [hosts, now.toISOString(), f.circuitFailures, f.circuitSpanSeconds, f.circuitProbeSeconds],
    );
    const open = new Map<string, number>();
    for (const r of rows) if (r.open_until) open.set(r.host, ms(r.open_until));
    return open;
  }

  async function hostsSucceeded(hosts: string[]): Promise<void> {
    if (hosts.length === 0) return;
    const closed = await sql.query<{ host: string; open_until: unknown }>(
      `delete from delivery_hosts where host = any($1::text[]) returning host, open_until`,
      [hosts],
    );
    for (const r of closed) if (r.open_until) log.info({ host: r.host }, 'delivery circuit closed: the host answers again');
  }

  /** Claims the probe of a parked host whose time has come; returns its next open_until if claimed. */
  /** Claims the probe of a parked host whose time has come: the next probe time (ms) if claimed, else null. */
  async function claimProbe(host: string, probes: number): Promise<number | null> {
    const now = clock.now();
    const next = now.getTime() + f.circuitProbeSeconds * 1000 * 2 ** Math.min(probes + 1, 6);
    const rows = await sql.query(
      `update delivery_hosts set open_until = $2::timestamptz, probes = probes + 1
        where host = $1 and open_until <= $3::timestamptz returning host`,
      [host, new Date(next).toISOString(), now.toISOString()],
    );
    return rows.length > 0 ? next : null;
  }

  /**
   * The sender's RSA key as a node:crypto KeyObject with its key id, kept a minute per sender
   * (Fedify's getActorKeyPairs exports each public key again on every call).
   */
  const keyCache = new Map<string, { at: number; key: Promise<SigningKey> }>();
  function signingKey(sender: string): Promise<SigningKey> {
    const now = clock.now().getTime();
    const hit = keyCache.get(sender);
    if (hit && now - hit.at < 60_000) return hit.key;
    const key = (async () => {
      const rsa = (await actorKeyPairs(ctx(), sender)).find((k) => k.privateKey.algorithm.name === 'RSASSA-PKCS1-v1_5');
      if (!rsa) throw new Error(`no RSA key pair for ${sender}`);
      return { keyId: rsa.keyId.href, privateKey: KeyObject.from(rsa.privateKey) };
    })();
    if (keyCache.size > 1_000) keyCache.clear();
    keyCache.set(sender, { at: now, key });
    key.catch(() => keyCache.delete(sender));
    return key;
  }

  async function run(job: DeliveryJob, row: Job): Promise<void> {
    const started = clock.now().getTime();
    const lane = row.queue;
    const inboxes = job.inboxes ?? (job.followersOf ? mergeInboxes(await followerInboxes(sql, job.followersOf, !!job.preferSharedInbox), job.alsoInboxes) : {});
    // The domain policy when the job runs: a server blocked after the activity was queued gets nothing.
    const policy = await services.domainPolicy.snapshot();
    for (const inbox of Object.keys(inboxes)) {
      if (!policy.allowed(new URL(inbox).host.toLowerCase())) delete inboxes[inbox];
    }
    const all = Object.keys(inboxes);
    const fields = { activityId: job.activityId, activityType: job.activityType, lane, round: job.round };
    // A bulk-lane job records each inbox it settles (delivery_checkpoints, in batches, with the
    // activity's counts) so that, retaken after its process died, it sends only to the others.
    const checkpointed = lane !== PRIORITY_LANE;
    /** Inboxes settled by an earlier run of this very job (retaken): their HTTP status, 0 if given up. */
    const done = new Map<string, number>();
    if (checkpointed && row.attempts > 1) {
      const rows = await sql.query<{ inbox: string; status: number }>(`select inbox, status from delivery_checkpoints where job_id = $1::bigint`, [row.id]);
      for (const r of rows) if (Object.hasOwn(inboxes, r.inbox)) done.set(r.inbox, Number(r.status));
    }
    const isDelivered = (status: number) => status >= 200 && status < 300;
    // A fan-out's row is written first, so its pending inboxes show while it drains; a small
    // job's row is written once, at the end of its round (one statement fewer on the priority lane).
    // A retaken job's row starts from what its checkpoints say was settled.
    const countFirst = !job.counted && lane !== PRIORITY_LANE;
    if (countFirst) {
      const doneDelivered = [...done.values()].filter(isDelivered).length;
      const doneFailed = done.size - doneDelivered;
      await sql.query(
        `insert into deliveries (activity_id, activity_type, sender, lane, inboxes, delivered, failed, pending, created_at, updated_at)
         values ($1, $2, $3, $4, $5::int, $7::int, $8::int, $5::int - $7::int - $8::int, $6, $6)
         on conflict (activity_id) do update set inboxes = $5::int, pending = $5::int - $7::int - $8::int, delivered = $7::int, failed = $8::int,
           last_error = null, updated_at = $6`,
        [job.activityId, job.activityType, job.sender, lane, all.length, clock.now().toISOString(), doneDelivered, doneFailed],
      );
    }
    if (all.length === 0) return;
    const counted = job.counted || countFirst;

    const key = await signingKey(job.sender);
    const body = new TextEncoder().encode(JSON.stringify(job.activity));
    const digest = `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
    const retryMs = backoffMs(job.round + 1, services.retryJitter);

    // The circuit: parked hosts get nothing; a host whose probe time has come gets one request first.
    const byHost = new Map<string, string[]>();
    for (const inbox of all) {
      if (done.has(inbox)) continue;
      const host = new URL(inbox).host;
      const list = byHost.get(host);
      if (list) list.push(inbox);
      else byHost.set(host, [inbox]);
    }
    // An ordered activity (a Follow then its Undo; Updates then a Move) keeps its order per host:
    // a host that still has an earlier activity of this key waiting for a retry gets this one
    // queued behind it, and every other host gets it now (a dead host holds up only itself).
    const behind: string[] = [];
    if (job.orderingKey && !job.orderingKey.includes(HOST_KEY)) {
      const prefix = `${job.orderingKey}${HOST_KEY}`;
      const waiting = await sql.query<{ ordering_key: string }>(
        `select distinct ordering_key from jobs where queue = $1 and state <> 'dead' and starts_with(ordering_key, $2)`,
        [lane, prefix],
      );
      for (const w of waiting) {
        const host = w.ordering_key.slice(prefix.length);
        const list = byHost.get(host);
        if (!list) continue;
        behind.push(...list);
        byHost.delete(host);
      }
    }
    const hostRows = await sql.query<HostRow>(`select host, open_until, probes from delivery_hosts where host = any($1::text[])`, [
      [...byHost.keys()],
    ]);
    /** Hosts with failures on record (a success resets them). */
    const failing = new Set(hostRows.map((r) => r.host));
    const outcomes = new Map<string, Outcome>();
    for (const [inbox, status] of done) {
      outcomes.set(inbox, isDelivered(status) ? { kind: 'delivered' } : { kind: 'failed', status, gone: status === 410 });
    }
    const toSend: string[] = [];
    const now0 = clock.now().getTime();
    const probes: { host: string; inbox: string; next: number }[] = [];
    const circuitOf = new Map(hostRows.filter((r) => r.open_until != null).map((r) => [r.host, r]));
    for (const inbox of behind) {
      outcomes.set(inbox, { kind: 'later', at: now0, hostFailure: false, error: 'queued behind an earlier activity to this host' });
    }
    const parked = (list: string[], at: number) => {
      for (const inbox of list) outcomes.set(inbox, { kind: 'later', at, hostFailure: false, error: 'host parked (circuit open)' });
    };
    let parkedHosts = 0;
    for (const [host, list] of byHost) {
      const c = circuitOf.get(host);
      if (!c) {
        toSend.push(...list);
        continue;
      }
      const until = ms(c.open_until!);
      const next = until <= now0 ? await claimProbe(host, c.probes) : null;
      if (next !== null) probes.push({ host, inbox: list[0]!, next });
      else {
        // Parked until its probe (another worker took a probe that was due: until its next one).
        parked(list, until > now0 ? until : now0 + f.circuitProbeSeconds * 1000);
        parkedHosts++;
      }
    }
    // Checkpoints: settled inboxes are written in batches (every CHECKPOINT_BATCH outcomes or
    // CHECKPOINT_MS), each batch in one statement that also moves the activity's counts, so
    // `roost deliveries` and the checkpoints agree whenever the process dies. An inbox whose
    // POST succeeded but whose batch was not written yet gets the activity again after a crash
    // (at-least-once; receivers de-duplicate).
    /** Inboxes whose outcome is in delivery_checkpoints and counted in deliveries already. */
    const recorded = new Set<string>(done.keys());
    const batch: { inbox: string; status: number }[] = [];
    let flushing: Promise<void> = Promise.resolve();
    const flush = () => {
      if (batch.length === 0) return;
      const items = batch.splice(0);
      flushing = flushing.then(async () => {
        try {
          await sql.query(
            `with ins as (
               insert into delivery_checkpoints (job_id, inbox, status)
               select $1::bigint, u.inbox, u.status from unnest($2::text[], $3::smallint[]) as u(inbox, status)
               on conflict do nothing
               returning status
             ), n as (
               select count(*) filter (where status between 200 and 299)::int as d, count(*) filter (where status not between 200 and 299)::int as x from ins
             )
             update deliveries set delivered = delivered + n.d, failed = failed + n.x, pending = pending - n.d - n.x, updated_at = $5
               from n where activity_id = $4`,
            [row.id, items.map((i) => i.inbox), items.map((i) => i.status), job.activityId, clock.now().toISOString()],
          );
          for (const i of items) recorded.add(i.inbox);
        } catch (err) {
          // Counted at the end of the round instead; a crash before then re-sends them.
          log.warn({ ...fields, err }, 'delivery progress not recorded');
        }
      });
    };
    const record = (inbox: string, o: Outcome) => {
      if (!checkpointed || o.kind === 'later') return;
      batch.push({ inbox, status: o.kind === 'delivered' ? 200 : o.status });
      if (batch.length >= CHECKPOINT_BATCH) flush();
    };
    const ticker = checkpointed ? setInterval(flush, CHECKPOINT_MS) : null;
    ticker?.unref?.();
    try {
      await Promise.all(
        probes.map(async ({ host, inbox, next }) => {
          const o = await post(inbox, body, digest, key, retryMs);
          outcomes.set(inbox, o);
          record(inbox, o);
          const rest = byHost.get(host)!.slice(1);
          if (o.kind === 'later' && o.hostFailure) {
            log.warn({ host, error: o.error }, 'delivery circuit probe failed: the host stays parked');
            parked(rest, next);
            outcomes.set(inbox, { ...o, at: Math.max(o.at, next) });
          } else {
            await hostsSucceeded([host]);
            toSend.push(...rest);
          }
        }),
      );

      // The fan-out itself: up to deliveryConcurrency POSTs in flight, the hosts taken in turn
      // (inboxes in the order the followers came would put dozens of requests on one host at once,
      // each on a connection of its own). A bulk job's row shows its progress (the checkpoint
      // batches) while it drains.
      interleaveByHost(toSend);
      let next = 0;
      const worker = async () => {
        while (next < toSend.length) {
          const inbox = toSend[next++]!;
          const o = await post(inbox, body, digest, key, retryMs);
          outcomes.set(inbox, o);
          record(inbox, o);
        }
      };
      await Promise.all(Array.from({ length: Math.min(f.deliveryConcurrency, toSend.length) }, worker));
    } finally {
      if (ticker) clearInterval(ticker);
      // The batch not yet written is counted by the round's last statement, below.
      await flushing;
    }

    // Hosts: a success closes (resets) the count, a failed round adds to it and may open the circuit.
    const okHosts = new Set<string>();
    const badHosts = new Set<string>();
    for (const inbox of toSend) {
      const o = outcomes.get(inbox)!;
      const host = new URL(inbox).host;
      if (o.kind === 'later' && o.hostFailure) badHosts.add(host);
      else okHosts.add(host);
    }
    for (const h of okHosts) badHosts.delete(h);
    await hostsSucceeded([...okHosts].filter((h) => failing.has(h) && !circuitOf.has(h)));
    const opened = await hostsFailed([...badHosts]);
    for (const [host, until] of opened) {
      if (!circuitOf.has(host)) log.warn({ host, until: new Date(until).toISOString() }, 'delivery circuit opened: the host is parked');
      for (const inbox of byHost.get(host)!) {
        const o = outcomes.get(inbox);
        if (o?.kind === 'later') outcomes.set(inbox, { ...o, at: Math.max(o.at, until) });
      }
    }

    // Tally, gone actors, retries.
    let delivered = 0;
    let failed = 0;
    let lastError: string | null = null;
    const gone: string[] = [];
    const later = new Map<number, Record<string, Target>>();
    for (const inbox of all) {
      const o = outcomes.get(inbox)!;
      if (o.kind === 'delivered') delivered++;
      else if (o.kind === 'failed') {
        failed++;
        lastError = `${inbox}: HTTP ${o.status}`;
        if (o.gone && !inboxes[inbox]!.shared) gone.push(...inboxes[inbox]!.actors);
      } else if (job.round + 1 >= DELIVERY_RETRY.maxRounds) {
        failed++;
        lastError = `${inbox}: ${o.error} (gave up after ${job.round + 1} rounds)`;
      } else {
        lastError = `${inbox}: ${o.error}`;
        const at = Math.ceil(o.at / 1000) * 1000;
        const group = later.get(at) ?? {};
        group[inbox] = inboxes[inbox]!;
        later.set(at, group);
      }
    }
    const pending = all.length - delivered - failed;
    if (counted) {
      // What the checkpoint batches did not count yet; the round's checkpoints go (its retries, if
      // any, are new rows or a rescheduled payload: a new round).
      let newDelivered = 0;
      let newFailed = 0;
      for (const inbox of all) {
        if (recorded.has(inbox)) continue;
        const o = outcomes.get(inbox)!;
        if (o.kind === 'delivered') newDelivered++;
        else if (o.kind === 'failed' || job.round + 1 >= DELIVERY_RETRY.maxRounds) newFailed++;
      }
      await sql.query(
        `with cleared as (delete from delivery_checkpoints where job_id = $6::bigint and $7::boolean)
         update deliveries set delivered = delivered + $2, failed = failed + $3, pending = pending - $2 - $3,
                last_error = coalesce($4, last_error), updated_at = $5 where activity_id = $1`,
        [job.activityId, newDelivered, newFailed, lastError, clock.now().toISOString(), row.id, checkpointed],
      );
    } else {
      await sql.query(
        `insert into deliveries (activity_id, activity_type, sender, lane, inboxes, delivered, failed, pending, last_error, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
         on conflict (activity_id) do update set inboxes = $5, delivered = $6, failed = $7, pending = $8, last_error = $9, updated_at = $10`,
        [job.activityId, job.activityType, job.sender, lane, all.length, delivered, failed, pending, lastError, clock.now().toISOString()],
      );
    }
    // Settled rows are kept two weeks; about one round in 500 sweeps the older ones.
    if (Math.random() < 0.002) {
      await sql.query(`delete from deliveries where created_at < $1::timestamptz and pending = 0`, [
        new Date(clock.now().getTime() - DELIVERY_STATE_KEPT_MS).toISOString(),
      ]);
      // Checkpoints of jobs that are gone (dead-lettered and deleted, or cancelled mid-round).
      await sql.query(`delete from delivery_checkpoints c where not exists (select 1 from jobs j where j.id = c.job_id)`);
    }
    if (gone.length) {
      await enqueueMany(
        sql,
        gone.map((actorUri) => ({ kind: ACTOR_GONE_JOB, payload: { actorUri }, maxAttempts: 5 })),
        { clock },
      );
    }
    log.info(
      { ...fields, inboxes: all.length, delivered, failed, pending, parkedHosts, ms: clock.now().getTime() - started },
      'delivery round',
    );
    if (later.size === 0) return;
    const retryJob = (group: Record<string, Target>): DeliveryJob => ({
      ...job,
      followersOf: undefined,
      alsoInboxes: undefined,
      inboxes: group,
      round: job.round + 1,
      counted: true,
    });
    if (job.orderingKey?.includes(HOST_KEY)) {
      // A host's ordered retry: in place, so later activities of the key to this host wait behind it.
      const merged = Object.assign({}, ...later.values()) as Record<string, Target>;
      throw new RescheduleJob(new Date(Math.max(...later.keys())), retryJob(merged), `${pending} inbox(es) to retry`);
    }
    if (job.orderingKey) {
      // One ordered job per host left, keyed to the host (see `behind` above).
      const perHost = new Map<string, { at: number; group: Record<string, Target> }>();
      for (const [at, group] of later) {
        for (const [inbox, target] of Object.entries(group)) {
          const host = new URL(inbox).host;
          const e = perHost.get(host) ?? { at: 0, group: {} };
          e.at = Math.max(e.at, at);
          e.group[inbox] = target;
          perHost.set(host, e);
        }
      }
      await enqueueMany(
        sql,
        [...perHost].map(([host, e]) => {
          const orderingKey = `${job.orderingKey}${HOST_KEY}${host}`;
          return {
            queue: lane,
            kind: DELIVERY_JOB,
            payload: { ...retryJob(e.group), orderingKey },
            runAt: new Date(e.at),
            maxAttempts: JOB_MAX_ATTEMPTS,
            orderingKey,
          };
        }),
        { clock },
      );
      return;
    }
    await enqueueMany(
      sql,
      [...later].map(([at, group]) => ({
        queue: lane,
        kind: DELIVERY_JOB,
        payload: retryJob(group),
        runAt: new Date(at),
        maxAttempts: JOB_MAX_ATTEMPTS,
      })),
      { clock },
    );
  }

  return { run };
}

/**
 * The two lanes' worker pools. The priority lane has its own pool (its concurrency reserved):
 * a Follow or an Accept is claimed at once even while bulk jobs fan out to thousands of inboxes.
 */
export function startDeliveryWorkers(
  services: Services,
  ctx: () => Context<void>,
  transport: OutboundTransport,
  opts: { listener?: JobNotifyListener; pollIntervalMs?: number },
): JobWorkers[] {
  const runner = createDeliveryRunner(services, ctx, transport);
  const handlers = { [DELIVERY_JOB]: (payload: unknown, job: Job) => runner.run(payload as DeliveryJob, job) };
  const common = {
    sql: services.db.sql,
    clock: services.clock,
    log: services.log.child({ module: 'delivery' }),
    listener: opts.listener,
    pollIntervalMs: opts.pollIntervalMs,
    handlers,
  };
  return [startWorkers({ ...common, queue: PRIORITY_LANE, concurrency: 4 }), startWorkers({ ...common, queue: BULK_LANE, concurrency: 2 })];
}

export interface DeliveryState {
  activityId: string;
  activityType: string;
  sender: string;
  lane: string;
  inboxes: number;
  delivered: number;
  failed: number;
  pending: number;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What became of an activity's deliveries, or null when Roost never sent it. */
export async function deliveryState(sql: Sql, activityId: string): Promise<DeliveryState | null> {
  const [r] = await sql.query<{
    activity_id: string;
    activity_type: string;
    sender: string;
    lane: string;
    inboxes: number;
    delivered: number;
    failed: number;
    pending: number;
    last_error: string | null;
    created_at: Date | string;
    updated_at: Date | string;
  }>(`select * from deliveries where activity_id = $1`, [activityId]);
  if (!r) return null;
  const iso = (v: Date | string) => new Date(ms(v)).toISOString();
  return {
    activityId: r.activity_id,
    activityType: r.activity_type,
    sender: r.sender,
    lane: r.lane,
    inboxes: Number(r.inboxes),
    delivered: Number(r.delivered),
    failed: Number(r.failed),
    pending: Number(r.pending),
    lastError: r.last_error,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}
