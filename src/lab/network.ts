/**
 * The lab's virtual network: host names map to in-process hosts (a full Roost, reached on its
 * loopback listener with the Host header kept; or a light peer, answered in-process), and every
 * request between them passes the link's faults, drawn from the scenario's seed:
 *
 * - partitions and hosts that are down refuse at once, as a refused connection does;
 * - a delivery (POST) is held until the lab clock reaches its arrival (latency, jitter or the
 *   link's latency distribution, a slow inbox's extra time, a reordered one's extra delay); the
 *   lab's scheduler moves the clock to the next arrival when nothing else is left to do;
 * - loss: held as long, then fails as a timed-out request; errors: answered with the drawn status
 *   (404/410/429/5xx) without reaching the host; duplication: a second copy arrives later;
 * - fetches (GET: actors, keys, objects, collections) meet partitions and hosts that are down,
 *   but not the link's loss, errors or latency: a lookup a step waits on does not move the clock,
 *   and a scenario's faults fall on deliveries, where senders retry (docs/lab.md).
 *
 * Each draw is a hash of the seed, the link, the request's stable key (its body or URL without
 * generated ids and dates) and its attempt number, not a position in one random stream: two runs
 * of one seed draw the same for the same request even when their deliveries interleave
 * differently.
 */
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { ManualClock } from '../lib/clock.ts';
import type { Network, WireRequest, WireResponse } from '../lib/network.ts';
import type { NetworkHost } from './network-types.ts';
import type { LinkRule, LinkSpec, NetworkSpec } from './scenario-types.ts';

import type { TraceInput } from './trace.ts';

export interface VirtualNetworkOptions {
  clock: ManualClock;
  seed: number;
  spec: NetworkSpec;
  trace: (record: TraceInput) => void;
}

export class NetworkError extends Error {
  override name = 'NetworkError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface Held {
  due: number;
  seq: number;
  from: string;
  release: () => void;
  abort: (error: Error) => void;
}

/** A full Roost reached on its loopback listener, the Host header naming it. */
export function loopbackHost(name: string, port: () => number): NetworkHost {
  return {
    name,
    handle: (req) =>
      new Promise<WireResponse>((resolve, reject) => {
        const r = http.request(
          { host: '127.0.0.1', port: port(), method: req.method, path: `${req.url.pathname}${req.url.search}`, headers: { ...req.headers, host: req.url.host }, agent: false },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const headers: Record<string, string> = {};
              for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
              resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
            });
            res.on('error', reject);
          },
        );
        r.on('error', reject);
        r.end(req.body ?? undefined);
      }),
  };
}

/** Uniform draws in [0, 1) from a hash: independent per (seed, link, key, attempt, purpose). */
function draw(...parts: (string | number)[]): number {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  return h.readUIntBE(0, 6) / 2 ** 48;
}

/** Signatures and proofs: they differ between runs (each run makes its own keys). */
const SIGNED_PARTS = new Set(['signature', 'proof', 'publicKey', 'publicKeyPem', 'assertionMethod']);

function withoutSignatures(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSignatures);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!SIGNED_PARTS.has(k)) out[k] = withoutSignatures(v);
  return out;
}

/** The request without what differs between two runs of one seed: generated ids, dates, keys and signatures. */
export function stableKey(req: WireRequest): string {
  let text = `${req.method} ${req.url.pathname}${req.url.search}`;
  if (req.body && req.body.byteLength > 0) {
    const raw = Buffer.from(req.body).toString('utf8');
    try {
      text = JSON.stringify(withoutSignatures(JSON.parse(raw)));
    } catch {
      text = raw;
    }
  }
  const normal = text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?/g, '#')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '#')
    .replace(/\d{6,}/g, '#');
  return createHash('sha256').update(normal).digest('hex').slice(0, 16);
}

/** A rule's side: a host name or `*` (the parser expands patterns into hosts). */
const matches = (side: string, host: string): boolean => side === '*' || side === host;

/** What an activity says about itself, for the trace. */
function describeBody(body: Uint8Array | null): { id: string | null; type: string; object: string | null } {
  if (!body || body.byteLength === 0) return { id: null, type: 'none', object: null };
  try {
    const json = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
    const obj = json.object;
    const object = typeof obj === 'string' ? obj : obj && typeof obj === 'object' && typeof (obj as { id?: unknown }).id === 'string' ? (obj as { id: string }).id : null;
    return { id: typeof json.id === 'string' ? json.id : null, type: typeof json.type === 'string' ? json.type : 'unknown', object };
  } catch {
    return { id: null, type: 'unparseable', object: null };
  }
}

export class VirtualNetwork {
  private readonly hosts = new Map<string, NetworkHost>();
  private readonly down = new Set<string>();
  private readonly rules: LinkRule[];
  private groups: Map<string, number> | null = null;
  private readonly held: Held[] = [];
  private seq = 0;
  private closed = false;
  /** Requests a host is answering now (released from the hold or not held). */
  private active = 0;
  private readonly attempts = new Map<string, number>();
  /** Per host: activity ids it accepted, with their types (to name what an outbound one answers). */
  private readonly receivedBy = new Map<string, Map<string, string>>();
  /** Causes already traced (an activity goes to many inboxes: one record). */
  private readonly causes = new Set<string>();
  private readonly opts: VirtualNetworkOptions;

  constructor(opts: VirtualNetworkOptions) {
    this.opts = opts;
    this.rules = [...opts.spec.links];
  }

  attach(host: NetworkHost): void {
    this.hosts.set(host.name, host);
  }

  /** A crashed or stopped host refuses connections until it is up again. */
  setDown(name: string, isDown: boolean): void {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
  }

  partition(groups: string[][]): void {
    this.groups = new Map();
    groups.forEach((g, i) => g.forEach((h) => this.groups!.set(h, i)));
  }

  heal(): void {
    this.groups = null;
  }

  addRule(rule: LinkRule): void {
    this.rules.push(rule);
  }

  /** What a snapshot keeps: the partition, the hosts down and the rules steps added. */
  state(): { groups: [string, number][] | null; down: string[]; rules: LinkRule[] } {
    return { groups: this.groups ? [...this.groups] : null, down: [...this.down], rules: [...this.rules] };
  }

  restore(state: ReturnType<VirtualNetwork['state']>): void {
    this.groups = state.groups ? new Map(state.groups) : null;
    this.down.clear();
    for (const d of state.down) this.down.add(d);
    this.rules.splice(0, this.rules.length, ...state.rules);
  }

  /** The Network function an instance (or a peer) sends through. */
  sender(from: string): Network {
    return (req) => this.request(from, req);
  }

  /** When the next held request arrives (lab clock ms), or null. */
  nextDue(): number | null {
    let min: number | null = null;
    for (const h of this.held) if (min === null || h.due < min) min = h.due;
    return min;
  }

  /** Lets every held request whose time has come go on; how many went. */
  releaseDue(): number {
    const now = this.opts.clock.now().getTime();
    const due = this.held.filter((h) => h.due <= now).sort((a, b) => a.due - b.due || a.seq - b.seq);
    for (const h of due) {
      this.held.splice(this.held.indexOf(h), 1);
      h.release();
    }
    return due.length;
  }

  /** Held requests (their senders wait) and requests being answered now. */
  get heldCount(): number {
    return this.held.length;
  }

  get activeCount(): number {
    return this.active;
  }

  /** The link's behaviour: the defaults, then every matching rule in order, field by field. */
  link(from: string, to: string): LinkSpec {
    let spec: LinkSpec = { ...this.opts.spec.defaults };
    for (const rule of this.rules) {
      if (!matches(rule.from, from) || !matches(rule.to, to)) continue;
      const { from: _f, to: _t, line: _l, ...rest } = rule;
      spec = { ...spec, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
    }
    return spec;
  }

  private latency(spec: LinkSpec, ...key: (string | number)[]): number {
    if (spec.latencyDist) {
      // Log-normal with the given mean (σ = 1), clamped to [min, max].
      const { meanMs, minMs, maxMs } = spec.latencyDist;
      const sigma = 1;
      const mu = Math.log(meanMs) - sigma ** 2 / 2;
      const u1 = Math.max(draw(...key, 'u1'), 1e-12);
      const u2 = draw(...key, 'u2');
      const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      return Math.round(Math.min(maxMs, Math.max(minMs, Math.exp(mu + sigma * z))));
    }
    const jitter = spec.jitterMs > 0 ? (draw(...key, 'jitter') * 2 - 1) * spec.jitterMs : 0;
    return Math.max(0, Math.round(spec.latencyMs + jitter));
  }

  private hold(from: string, due: number): Promise<void> {
    // A stopped sender (crashed, or the lab closing) waits for nothing.
    if (this.closed || this.down.has(from)) return Promise.reject(new NetworkError('ECONNRESET', `the request was cut: ${from} stopped`));
    if (due <= this.opts.clock.now().getTime()) return Promise.resolve();
    return new Promise((resolve, reject) => this.held.push({ due, seq: this.seq++, from, release: resolve, abort: reject }));
  }

  /**
   * Fails the held requests of `from` (a host that stops: its senders must not wait for a clock
   * that will not move for them), or of every host when the lab closes.
   */
  abortHeld(from?: string): void {
    if (from === undefined) this.closed = true;
    for (const h of [...this.held]) {
      if (from !== undefined && h.from !== from) continue;
      this.held.splice(this.held.indexOf(h), 1);
      h.abort(new NetworkError('ECONNRESET', `the request was cut: ${from ?? 'the lab'} stopped`));
    }
  }

  private async answer(host: NetworkHost, req: WireRequest): Promise<WireResponse> {
    this.active++;
    try {
      return await host.handle(req);
    } finally {
      this.active--;
    }
  }

  async request(from: string, req: WireRequest): Promise<WireResponse> {
    const to = req.url.hostname;
    const host = this.hosts.get(to);
    const isPost = req.method === 'POST';
    const now = this.opts.clock.now().getTime();
    const about = isPost ? describeBody(req.body) : { id: null, type: 'GET', object: null };
    const key = stableKey(req);
    const attemptKey = `${from}>${to}>${key}`;
    const attempt = (this.attempts.get(attemptKey) ?? 0) + 1;
    this.attempts.set(attemptKey, attempt);
    const d = (purpose: string) => draw(this.opts.seed, from, to, key, attempt, purpose);

    const record = (outcome: 'delivered' | 'http-error' | 'lost' | 'partitioned' | 'down' | 'duplicated', status: number | null, latencyMs: number) => {
      if (isPost) {
        this.opts.trace({ kind: 'delivery', from, to, inbox: req.url.href, id: about.id, key, type: about.type, outcome, status, latencyMs, attempt });
      } else {
        const o = outcome === 'delivered' ? 'ok' : outcome === 'duplicated' ? 'ok' : outcome;
        this.opts.trace({ kind: 'fetch', from, to, url: req.url.href, outcome: o, status });
      }
    };

    if (!host) {
      // Nothing outside the lab is reachable: no DNS, no Internet.
      record('down', null, 0);
      throw new NetworkError('ENOTFOUND', `getaddrinfo ENOTFOUND ${to} (not a host of this lab)`);
    }
    if (isPost) this.noteCause(from, about);
    if (this.groups && (this.groups.get(from) ?? -1) !== (this.groups.get(to) ?? -1)) {
      record('partitioned', null, 0);
      throw new NetworkError('ECONNREFUSED', `connect ECONNREFUSED ${to} (partitioned from ${from})`);
    }
    const spec = this.link(from, to);
    if (this.down.has(to) || spec.down) {
      record('down', null, 0);
      throw new NetworkError('ECONNREFUSED', `connect ECONNREFUSED ${to} (down)`);
    }
    const base = this.latency(spec, this.opts.seed, from, to, key, attempt);
    const reordered = spec.reorder > 0 && d('reorder') < spec.reorder ? Math.round(base * 2 * d('reorder-extra')) : 0;
    const total = base + reordered + spec.slowMs;

    if (isPost && spec.loss > 0 && d('loss') < spec.loss) {
      if (isPost) await this.hold(from, now + total);
      record('lost', null, total);
      throw new NetworkError('ETIMEDOUT', `request to ${to} timed out (lost)`);
    }
    let errorStatus: number | null = null;
    let acc = 0;
    const u = d('error');
    for (const [status, p] of Object.entries(isPost ? (spec.errors ?? {}) : {})) {
      acc += p;
      if (u < acc) {
        errorStatus = Number(status);
        break;
      }
    }
    if (isPost) await this.hold(from, now + total);
    if (this.down.has(to)) {
      // It went down while the request travelled.
      record('down', null, total);
      throw new NetworkError('ECONNRESET', `socket hang up: ${to} went down`);
    }
    if (errorStatus !== null) {
      record('http-error', errorStatus, total);
      return { status: errorStatus, headers: errorStatus === 429 ? { 'retry-after': '60' } : {}, body: new Uint8Array() };
    }
    const res = await this.answer(host, req);
    const ok = res.status >= 200 && res.status < 300;
    record(ok ? 'delivered' : 'http-error', res.status, total);
    if (isPost && ok) this.noteReceived(to, from, about, key);
    if (isPost && spec.duplicate > 0 && d('duplicate') < spec.duplicate) {
      // A second copy, a little later: the receiver must make it a no-op.
      const extra = this.latency(spec, this.opts.seed, from, to, key, attempt, 'dup');
      void this.hold(from, this.opts.clock.now().getTime() + extra + 1)
        .then(() => this.answer(host, req))
        .then(
          (r) => record('duplicated', r.status, total + extra + 1),
          () => record('lost', null, total + extra + 1),
        );
    }
    return res;
  }

  private noteReceived(to: string, from: string, about: { id: string | null; type: string }, key: string): void {
    this.opts.trace({ kind: 'received', instance: to, from, id: about.id, key, type: about.type });
    if (!about.id) return;
    let seen = this.receivedBy.get(to);
    if (!seen) this.receivedBy.set(to, (seen = new Map()));
    seen.set(about.id, about.type);
  }

  /** An outbound activity whose object is one this host received: the inbound caused it (an Accept of a Follow…). */
  private noteCause(from: string, about: { id: string | null; type: string; object: string | null }): void {
    if (!about.object || !about.id) return;
    const causeType = this.receivedBy.get(from)?.get(about.object);
    if (!causeType || this.causes.has(about.id)) return;
    this.causes.add(about.id);
    this.opts.trace({ kind: 'caused', instance: from, cause: about.object, causeType, effect: about.id, effectType: about.type });
  }
}
