/**
 * A lab: the instances of one scenario in this process, on one database server (a database per
 * instance, copied from one migrated template), on one virtual network (./network.ts), under one
 * clock. The lab owns time: the clock moves only when the runner asks (an `advance`, an
 * expectation's `within`) and then from one due thing to the next — a held delivery's arrival, a
 * job's run_at on any instance, a light peer's timer — once everything due now has been done.
 *
 * "Done" is read from each instance's jobs table: nothing ready, nothing running except delivery
 * jobs whose requests the network holds (they wait for the clock), nothing in flight on the
 * network. Before each jump the leases of running jobs move with the clock, so a job waiting on a
 * held request is not taken for dead and run twice.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { loadConfig, type RoostConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost } from '../main.ts';
import { openDatabase } from '../db/orm.ts';
import { startEmbeddedPostgres, TEST_SETTINGS, type EmbeddedPostgres } from '../db/embedded.ts';
import { createManualClock, type ManualClock } from '../lib/clock.ts';
import { createDomainBlock } from '../services/domain-blocks.ts';
import { loopbackHost, VirtualNetwork } from './network.ts';
import type { InstanceSpec, Scenario } from './scenario-types.ts';
import type { TraceWriter } from './trace.ts';
import type { PeerContext } from './network-types.ts';
import { createPeer, type LabPeer } from './peers/index.ts';
import { seededRandom } from './scenario.ts';

export type PeerFactory = (name: string, software: Exclude<InstanceSpec['software'], 'roost'>, ctx: PeerContext) => LabPeer;

export interface LabOptions {
  scenario: Scenario;
  trace: TraceWriter;
  log: Logger;
  /** A PostgreSQL server to make the instances' databases on; unset: an embedded one in workDir. */
  databaseUrl?: string;
  /** Where the instances' data directories (and the embedded server) live; removed on close. */
  workDir: string;
  /** Makes a light peer (default: src/lab/peers/, on the lab's http origins). */
  createPeer?: PeerFactory;
  /** Connections each instance may open (small: many instances share one server). */
  poolMax?: number;
}

export interface LabInstance {
  name: string;
  spec: InstanceSpec;
  config: RoostConfig;
  roost: RunningRoost | null;
  databaseName: string;
}

interface JobStats {
  running: number;
  runningDeliveries: number;
  ready: number;
  next: number | null;
}

const GENEROUS = { limit: 1_000_000, periodSeconds: 300 };

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Lab {
  readonly clock: ManualClock;
  readonly network: VirtualNetwork;
  readonly instances = new Map<string, LabInstance>();
  readonly peers = new Map<string, LabPeer>();
  private readonly opts: LabOptions;
  private embedded: EmbeddedPostgres | null = null;
  private serverUrl = '';
  private readonly prefix = `roost_lab_${randomBytes(4).toString('hex')}`;
  private template = '';
  private readonly timers: { at: number; seq: number; fn: () => void | Promise<void> }[] = [];
  private timerSeq = 0;
  private timersRunning = 0;
  private readonly seenEvents = new Set<string>();

  constructor(opts: LabOptions) {
    this.opts = opts;
    this.clock = createManualClock(opts.scenario.start);
    this.network = new VirtualNetwork({
      clock: this.clock,
      seed: opts.scenario.seed,
      spec: opts.scenario.network,
      trace: (r) => opts.trace.write(r),
    });
  }

  private admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: this.serverUrl });
    return c.connect().then(() => fn(c).finally(() => c.end()));
  }

  /** Starts the database server, the template and every instance and peer. */
  async start(): Promise<void> {
    const { scenario, workDir } = this.opts;
    mkdirSync(workDir, { recursive: true });
    if (this.opts.databaseUrl) this.serverUrl = this.opts.databaseUrl;
    else {
      // Settings for a lab: many pools on one server, no fsync (a lab's data is thrown away).
      this.embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'db'), settings: { ...TEST_SETTINGS }, database: 'postgres', log: this.opts.log });
      this.serverUrl = this.embedded.url;
    }
    this.template = `${this.prefix}_template`;
    await this.admin((c) => c.query(`create database ${this.template}`));
    const db = await openDatabase({ databaseUrl: withDatabase(this.serverUrl, this.template), poolMax: 2 });
    await db.migrate();
    await db.close();

    for (const spec of scenario.instances) {
      if (spec.software === 'roost') {
        const databaseName = `${this.prefix}_${this.instances.size}`;
        await this.admin((c) => c.query(`create database ${databaseName} template ${this.template}`));
        const config = loadConfig({
          env: {},
          overrides: {
            host: '127.0.0.1',
            port: 0,
            domain: spec.name,
            publicUrl: `http://${spec.name}`,
            dataDir: path.join(workDir, spec.name),
            databaseUrl: withDatabase(this.serverUrl, databaseName),
            databasePoolMax: this.opts.poolMax ?? 4,
            logLevel: this.opts.log.level,
            registrations: { mode: spec.registrations },
            rateLimits: { perToken: GENEROUS, perIp: GENEROUS, signIn: GENEROUS, signInPerLogin: GENEROUS, signUp: GENEROUS, uploads: GENEROUS },
            federation: { mode: spec.federationMode, authorizedFetch: spec.authorizedFetch, allowPrivateAddresses: true },
          },
        });
        const instance: LabInstance = { name: spec.name, spec, config, roost: null, databaseName };
        this.instances.set(spec.name, instance);
        this.network.attach(loopbackHost(spec.name, () => instance.roost?.port ?? 0));
        await this.boot(instance);
        for (const block of spec.domainBlocks) {
          if (block.severity === 'noop') continue;
          await createDomainBlock(instance.roost!.services, { domain: block.domain, severity: block.severity }, 'operator');
        }
      } else {
        const make: PeerFactory = this.opts.createPeer ?? ((name, software, ctx) => createPeer(name, software, ctx, { origin: `http://${name}` }));
        const peer = make(spec.name, spec.software, {
          clock: this.clock,
          send: this.network.sender(spec.name),
          schedule: (at, fn) => this.schedule(at, fn),
          random: seededRandom(scenario.seed, `peer:${spec.name}`),
        });
        this.peers.set(spec.name, peer);
        this.network.attach(peer);
      }
    }
  }

  private async boot(instance: LabInstance): Promise<void> {
    mkdirSync(instance.config.dataDir, { recursive: true });
    instance.roost = await startRoost(instance.config, {
      controlSocket: false,
      clock: this.clock,
      signatureClock: this.clock,
      network: this.network.sender(instance.name),
      log: this.opts.log.child({ instance: instance.name }),
      retryJitter: 0,
      observe: (o) => this.opts.trace.write({ ...o, instance: instance.name }),
      beforeConsumer: (_name, record) => {
        const key = `${instance.name}:${record.id}`;
        if (this.seenEvents.has(key)) return;
        this.seenEvents.add(key);
        this.opts.trace.write({ kind: 'event', instance: instance.name, event: (record.event as { type: string }).type });
      },
    });
  }

  /** Stops an instance at once (its requests in flight fail): the network refuses it until restarted. */
  async crash(name: string): Promise<void> {
    const instance = this.instance(name);
    this.network.setDown(name, true);
    this.network.abortHeld(name);
    const roost = instance.roost;
    instance.roost = null;
    await roost?.close();
  }

  async restart(name: string): Promise<void> {
    const instance = this.instance(name);
    if (instance.roost) return;
    await this.boot(instance);
    this.network.setDown(name, false);
  }

  instance(name: string): LabInstance {
    const i = this.instances.get(name);
    if (!i) throw new Error(`${name} is not a Roost instance of this lab`);
    return i;
  }

  /** A light peer's timer on the lab clock. */
  schedule(at: Date, fn: () => void | Promise<void>): void {
    this.timers.push({ at: at.getTime(), seq: this.timerSeq++, fn });
  }

  private runDueTimers(): number {
    const now = this.clock.now().getTime();
    const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const t of due) {
      this.timers.splice(this.timers.indexOf(t), 1);
      this.timersRunning++;
      void Promise.resolve()
        .then(t.fn)
        .catch((err) => this.opts.log.warn({ err }, 'lab peer timer failed'))
        .finally(() => this.timersRunning--);
    }
    return due.length;
  }

  private async jobStats(instance: LabInstance): Promise<JobStats | null> {
    if (!instance.roost) return null;
    const now = this.clock.now().toISOString();
    const rows = await instance.roost.services.db.sql.query<{ running: string; deliveries: string; ready: string; next: Date | string | null }>(
      `select count(*) filter (where state = 'running') as running,
              count(*) filter (where state = 'running' and kind = 'delivery') as deliveries,
              count(*) filter (where state = 'pending' and run_at <= $1) as ready,
              min(run_at) filter (where state = 'pending' and run_at > $1) as next
         from jobs`,
      [now],
    );
    const r = rows[0]!;
    return { running: Number(r.running), runningDeliveries: Number(r.deliveries), ready: Number(r.ready), next: r.next === null ? null : new Date(r.next).getTime() };
  }

  /**
   * Lets everything due at the current time happen: held requests that have arrived go on, peer
   * timers run, and every instance works its jobs, until nothing is left but what waits for the
   * clock. Returns when the next thing is due (lab clock ms), or null when nothing is.
   */
  async drain(deadlineWallMs = 120_000): Promise<number | null> {
    const started = performance.now();
    let quiet = 0;
    let stuck = 0;
    let last = '';
    for (;;) {
      const moved = this.network.releaseDue() + this.runDueTimers();
      const stats = (await Promise.all([...this.instances.values()].map((i) => this.jobStats(i)))).filter((s): s is JobStats => s !== null);
      const working = stats.some((s) => s.running > s.runningDeliveries);
      const ready = stats.reduce((n, s) => n + s.ready, 0);
      const waitingDeliveries = stats.reduce((n, s) => n + s.runningDeliveries, 0);
      const held = this.network.heldCount;
      // Delivery jobs and peer timers that wait on a held request wait for the clock: calm then.
      const calm = moved === 0 && !working && this.network.activeCount === 0 && ((waitingDeliveries === 0 && this.timersRunning === 0) || held > 0);
      // Ready jobs nobody claims while every worker of their lane waits on a held request: they
      // wait for the clock too (seen unchanged for a while, so a worker that is merely slow to
      // claim is not mistaken for one that cannot).
      const now = `${JSON.stringify(stats)}|${held}`;
      stuck = calm && ready > 0 && held > 0 && now === last ? stuck + 1 : 0;
      last = now;
      if (calm && (ready === 0 || stuck >= 25)) {
        // A few times in a row, a few ms apart: a job's commit and its follower's enqueue are not one instant.
        if (++quiet >= 3 || stuck >= 25) {
          const dues = [this.network.nextDue(), ...(ready > 0 ? [] : stats.map((s) => s.next)), ...this.timers.map((t) => t.at)].filter(
            (d): d is number => d !== null,
          );
          return dues.length ? Math.min(...dues) : null;
        }
      } else quiet = 0;
      if (performance.now() - started > deadlineWallMs) {
        throw new Error(`the lab did not settle within ${Math.round(deadlineWallMs / 1000)} s of wall time (jobs: ${JSON.stringify(stats)}, held: ${held})`);
      }
      await sleep(quiet > 0 || stuck > 0 ? 4 : 8);
    }
  }

  /**
   * Waits for work that itself waits on the network (a light peer's delivery, held until it
   * arrives): while it is pending and the lab is otherwise done, the clock moves to the next held
   * arrival. Only arrivals: a timer hours away is not a reason to move while a step is under way.
   */
  async settleWhile<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const watched = work.finally(() => {
      done = true;
    });
    // Its failure is the caller's (returned below), not an unhandled rejection meanwhile.
    watched.catch(() => undefined);
    while (!done) {
      await this.drain();
      if (done) break;
      const next = this.network.nextDue();
      if (next === null) {
        await Promise.race([watched.catch(() => undefined), sleep(5)]);
        continue;
      }
      await this.jump(Math.max(next, this.clock.now().getTime()));
    }
    return watched;
  }

  /** Moves the clock to `to`, the leases of running jobs with it. */
  private async jump(to: number): Promise<void> {
    const from = this.clock.now().getTime();
    if (to <= from) return;
    const ms = to - from;
    await Promise.all(
      [...this.instances.values()].map((i) =>
        i.roost?.services.db.sql.query(`update jobs set run_at = run_at + make_interval(secs => $1) where state = 'running'`, [ms / 1000]),
      ),
    );
    this.opts.trace.write({ kind: 'clock', from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    this.clock.set(new Date(to));
  }

  /**
   * Runs the lab until `until` (lab clock ms), jumping from one due thing to the next; with
   * `check`, stops as soon as it holds (checked after each settling). Returns whether check held
   * (true without one).
   */
  async runUntil(until: number, check?: () => Promise<boolean>): Promise<boolean> {
    for (;;) {
      const next = await this.drain();
      if (check && (await check())) return true;
      const now = this.clock.now().getTime();
      if (now >= until) return !check;
      await this.jump(next === null ? until : Math.min(Math.max(next, now + 1), until));
    }
  }

  /** Network state a snapshot keeps (the partition, hosts down, rules added by steps). */
  private readonly snapshots = new Map<string, { at: number; network: ReturnType<VirtualNetwork['state']> }>();

  private snapshotDb(instance: LabInstance, name: string): string {
    return `${instance.databaseName}_s_${name}`;
  }

  /**
   * Keeps the lab as it is now under `name`: each instance stopped, its database copied, and
   * started again; the clock and the network's state noted. Light peers keep their state in
   * memory only, so a lab with peers cannot be snapshotted.
   */
  async snapshot(name: string): Promise<void> {
    if (!/^[a-z0-9_]{1,20}$/.test(name)) throw new LabControlError(422, 'A snapshot name is 1–20 lower-case letters, digits or underscores');
    if (this.peers.size > 0) throw new LabControlError(409, 'A lab with light peers cannot be snapshotted (their state is in memory)');
    await this.drain();
    const up = [...this.instances.values()].filter((i) => i.roost);
    for (const i of up) await this.stopQuietly(i);
    await this.admin(async (c) => {
      for (const i of this.instances.values()) {
        await c.query(`drop database if exists ${this.snapshotDb(i, name)}`);
        await c.query(`create database ${this.snapshotDb(i, name)} template ${i.databaseName}`);
      }
    });
    for (const i of up) await this.boot(i);
    this.snapshots.set(name, { at: this.clock.now().getTime(), network: this.network.state() });
  }

  /** Puts the lab back as it was at snapshot `name`: databases, clock and network. */
  async reset(name: string): Promise<void> {
    const snap = this.snapshots.get(name);
    if (!snap) throw new LabControlError(404, `No snapshot named ${name}`);
    for (const i of this.instances.values()) await this.stopQuietly(i);
    await this.admin(async (c) => {
      for (const i of this.instances.values()) {
        await c.query(`drop database if exists ${i.databaseName} with (force)`);
        await c.query(`create database ${i.databaseName} template ${this.snapshotDb(i, name)}`);
      }
    });
    this.clock.set(new Date(snap.at));
    this.network.restore(snap.network);
    for (const i of this.instances.values()) await this.boot(i);
  }

  private async stopQuietly(instance: LabInstance): Promise<void> {
    this.network.abortHeld(instance.name);
    const roost = instance.roost;
    instance.roost = null;
    await roost?.close();
  }

  async close(): Promise<void> {
    this.network.abortHeld();
    for (const i of this.instances.values()) {
      const roost = i.roost;
      i.roost = null;
      await roost?.close().catch(() => undefined);
    }
    if (this.serverUrl) {
      await this.admin(async (c) => {
        for (const i of this.instances.values()) await c.query(`drop database if exists ${i.databaseName} with (force)`);
        await c.query(`drop database if exists ${this.template} with (force)`);
        for (const snap of this.snapshots.keys()) {
          for (const i of this.instances.values()) await c.query(`drop database if exists ${this.snapshotDb(i, snap)} with (force)`);
        }
      }).catch(() => undefined);
    }
    await this.embedded?.stop();
    rmSync(this.opts.workDir, { recursive: true, force: true });
  }
}

/** A control request the lab refuses (the control API answers with its status). */
export class LabControlError extends Error {
  override name = 'LabControlError';
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
