/**
 * Bounds on activity deliveries (a POST of a signed activity to a remote inbox).
 *
 * Every other fetch Roost makes goes through the bounded fetcher (src/lib/safe-fetch.ts, via the
 * loaders in ./loaders.ts). Deliveries cannot: Fedify 2.3.6 sends them (sendActivity → its
 * outbox queue → doubleKnock) with the global `fetch`, and neither createFederation nor
 * sendActivity takes another fetch. Left alone, that fetch runs on undici's defaults: 300 s to
 * wait for a response head and 300 s between body chunks, and no address check, so a tarpit
 * inbox holds a delivery worker for minutes and an inbox URL may point into the private network.
 *
 * So the bounds are installed where that fetch looks for them, on the process's global dispatcher
 * (Node's fetch reads it at every request), by startRoost, and removed when the last instance stops:
 *
 * - an undici Agent with a connect timeout (at most 5 s), a timeout for the response head and one
 *   for each gap in the body, all `federation.deliveryTimeoutSeconds`: an attempt on a tarpit is
 *   abandoned then and the outbox queue retries it later with its backoff (FEDIFY_QUEUE_RETRY),
 *   the worker free meanwhile. Fedify reads at most a few KiB of an error response's body and
 *   none of a success's;
 * - the private-address check on the address actually connected: every new connection's peer
 *   address is checked as soon as it is connected (undici's `undici:client:connected` diagnostics
 *   channel), before the request is written, and a loopback, private, link-local… address (the
 *   ranges of safe-fetch.ts) ends it, whether the URL named an IP literal or a name that DNS
 *   answered with such an address.
 *
 * Why process-wide, and what follows from it: the dispatcher is one per process, so with several
 * instances in a process (tests, the lab) the bounds are the loosest of them (the longest timeout;
 * private addresses allowed as soon as one instance allows them), and the listen and public
 * addresses of the running instances are always reachable (a process talking to itself is no SSRF).
 * Anything else in the process that uses the global fetch gets the same bounds; in Roost nothing
 * does (its own fetches are safe-fetch's; the CLI starts no instance). The Agent is the class of
 * Node's own bundled undici (the constructor of its default dispatcher): undici is not a
 * dependency of Roost, and another copy's dispatcher need not speak the bundled fetch's protocol.
 */
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { DEFAULT_CONNECT_TIMEOUT_MS, isNonPublicAddress, UnsafeUrlError } from '../lib/safe-fetch.ts';

/** Where undici (Node's bundled copy included) keeps the global dispatcher. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const CONNECTED = 'undici:client:connected';

export interface DeliveryBounds {
  /** Response head, and each gap in the body; connecting gets at most DEFAULT_CONNECT_TIMEOUT_MS of it. */
  timeoutMs: number;
  allowPrivateAddresses: boolean;
  /** This instance's own origins (listen and public URL): always reachable. */
  ownOrigins: string[];
}

interface Dispatcher {
  close(): Promise<void>;
}
type AgentClass = new (options: {
  connect: { timeout: number };
  headersTimeout: number;
  bodyTimeout: number;
}) => Dispatcher;

interface ConnectedMessage {
  socket: Socket;
  connectParams: { hostname?: string; host?: string; port?: string | number; protocol?: string };
}

const registered = new Map<symbol, DeliveryBounds>();
let original: unknown;
let installed: Dispatcher | null = null;
let allowPrivate = false;
let ownOrigins = new Set<string>();

/** `host:port` with the scheme's default port filled in and IPv6 brackets dropped. */
export function originKey(hostname: string, port: string | number | undefined, protocol: string | undefined): string {
  const p = port === undefined || port === '' || port === null ? (protocol === 'https:' ? '443' : '80') : String(port);
  return `${hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${p}`;
}

function globals(): Record<symbol, unknown> {
  return globalThis as unknown as Record<symbol, unknown>;
}

/** Node's bundled undici Agent: the class of the default global dispatcher, made on first use of fetch. */
function bundledAgent(): AgentClass | null {
  let current = globals()[GLOBAL_DISPATCHER];
  if (current === undefined) {
    // The first call to fetch loads undici and sets its default dispatcher (a data: URL goes nowhere).
    fetch('data:,').catch(() => undefined);
    current = globals()[GLOBAL_DISPATCHER];
  }
  const ctor = (current as { constructor?: unknown } | undefined)?.constructor;
  return typeof ctor === 'function' && ctor.name === 'Agent' ? (ctor as AgentClass) : null;
}

function onConnected(message: unknown): void {
  if (allowPrivate) return;
  const { socket, connectParams } = message as ConnectedMessage;
  const address = socket.remoteAddress;
  if (!address || !isNonPublicAddress(address)) return;
  const host = connectParams.hostname ?? connectParams.host ?? '';
  if (ownOrigins.has(originKey(host, connectParams.port, connectParams.protocol))) return;
  socket.destroy(new UnsafeUrlError(`${host} is at a non-public address (${address}): not delivered`));
}

let AgentCtor: AgentClass | null | undefined;

function apply(log?: Logger): void {
  const all = [...registered.values()];
  allowPrivate = all.some((b) => b.allowPrivateAddresses);
  ownOrigins = new Set(all.flatMap((b) => b.ownOrigins));
  const timeoutMs = Math.max(...all.map((b) => b.timeoutMs));
  AgentCtor ??= bundledAgent();
  if (!AgentCtor) {
    log?.warn('the global fetch has no undici Agent to bound: deliveries run on its defaults');
    return;
  }
  const previous = installed;
  installed = new AgentCtor({
    connect: { timeout: Math.min(DEFAULT_CONNECT_TIMEOUT_MS, timeoutMs) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  globals()[GLOBAL_DISPATCHER] = installed;
  // Requests under way finish on the agent they started on.
  void previous?.close().catch(() => undefined);
}

/**
 * Installs the bounds for one instance; returns their release. The process's dispatcher follows
 * the running instances and is given back as it was when the last one releases.
 */
export function boundDeliveries(bounds: DeliveryBounds, log?: Logger): () => void {
  const id = Symbol('instance');
  if (registered.size === 0) {
    AgentCtor ??= bundledAgent();
    original = globals()[GLOBAL_DISPATCHER];
    diagnostics.subscribe(CONNECTED, onConnected);
  }
  registered.set(id, bounds);
  apply(log);
  return () => {
    if (!registered.delete(id)) return;
    if (registered.size > 0) return apply(log);
    diagnostics.unsubscribe(CONNECTED, onConnected);
    const ours = installed;
    installed = null;
    if (globals()[GLOBAL_DISPATCHER] === ours) {
      globals()[GLOBAL_DISPATCHER] = original;
    }
    void ours?.close().catch(() => undefined);
  };
}

/** What deliveries need of the process's dispatcher: undici's request() (its fast path, no fetch machinery). */
export interface DeliveryDispatcher {
  request(options: {
    origin: string;
    path: string;
    method: 'POST';
    headers: Record<string, string>;
    body: Uint8Array;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: { dump(): Promise<void> } }>;
}

/**
 * The global dispatcher (the bounded agent once boundDeliveries installed it: its timeouts and
 * its check of the connected address apply), for delivery's own requests; null if there is none
 * with request() (then deliveries use fetch, which goes through the same dispatcher).
 */
export function deliveryDispatcher(): DeliveryDispatcher | null {
  let current = globals()[GLOBAL_DISPATCHER];
  if (current === undefined) {
    fetch('data:,').catch(() => undefined);
    current = globals()[GLOBAL_DISPATCHER];
  }
  return typeof (current as { request?: unknown } | undefined)?.request === 'function' ? (current as DeliveryDispatcher) : null;
}
