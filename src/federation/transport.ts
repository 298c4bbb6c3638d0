/**
 * The outbound transport of one running instance: how its activity deliveries leave it. startRoost
 * makes one per instance (its own configuration, its own connections) and closes it when the
 * instance stops; the delivery lanes (./delivery.ts) sign and POST through it. Nothing in it is
 * shared with another instance in the process, and the process's global dispatcher is left alone.
 *
 * - Signing: draft-cavage rsa-sha256 over (request-target), host, date, digest and content-type,
 *   as Mastodon signs deliveries, with node:crypto's asynchronous sign (libuv's thread pool: every
 *   core signs, the event loop does not wait); Fedify's signRequest builds two Request objects per
 *   call and measured slower in test/bench/delivery.
 * - Sending: undici's request() (its fast path, no fetch machinery: about 3× the rate of fetch) on
 *   an Agent of this instance's, keeping connections alive per origin. The Agent is the class of
 *   Node's own bundled undici (the constructor of fetch's default dispatcher, read, never
 *   replaced): undici is not a dependency of Roost.
 * - Bounds: at most DEFAULT_CONNECT_TIMEOUT_MS to connect, and `federation.deliveryTimeoutSeconds`
 *   for the response head and for each gap in the body: a tarpit inbox is abandoned then, and the
 *   delivery retried later by its job, the worker free meanwhile.
 * - The address guard, made before connecting, as safe-fetch's (src/lib/safe-fetch.ts): an IP
 *   literal is checked before the socket is made, a name's DNS answer inside the socket's lookup,
 *   before any TCP connection is opened; a loopback, private, link-local… address is refused
 *   unless `federation.allowPrivateAddresses`. The instance's own origins (its listen address and
 *   public URL) are always reachable: an instance talking to itself is no SSRF.
 */
import { sign as cryptoSign, type KeyObject } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import net, { isIP, type LookupFunction, type Socket } from 'node:net';
import tls from 'node:tls';
import type { Clock } from '../lib/clock.ts';
import type { Network } from '../lib/network.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS, guardedLookup, isNonPublicAddress, UnsafeUrlError } from '../lib/safe-fetch.ts';

const AS_TYPE = 'application/activity+json';

export interface TransportOptions {
  /** For the response head and for each gap in the body; connecting gets at most DEFAULT_CONNECT_TIMEOUT_MS of it. */
  timeoutMs: number;
  allowPrivateAddresses: boolean;
  /** This instance's own origins (originKey): reachable even when private addresses are not. */
  ownOrigins: readonly string[];
  /** Name resolution (services.dnsLookup); the system resolver by default. */
  lookup?: LookupFunction;
  userAgent: string;
  /** The lab's virtual network (src/lib/network.ts): deliveries go there instead of a socket. */
  network?: Network;
  /** The clock signatures are dated by (services.signatureClock): the wall clock unset. */
  signatureClock?: Clock;
}

export interface SigningKey {
  keyId: string;
  privateKey: KeyObject;
}

export interface SignedPost {
  inbox: URL;
  body: Uint8Array;
  /** The body's `SHA-256=…` digest (computed once per activity, not per inbox). */
  digest: string;
  key: SigningKey;
}

export interface PostAnswer {
  status: number;
  retryAfter: string | null;
}

export interface OutboundTransport {
  /**
   * Signs and POSTs an activity, reads the (small) answer so the connection is reused, and gives
   * its status. Throws UnsafeUrlError for a refused address, else the network or timeout error.
   */
  post(request: SignedPost): Promise<PostAnswer>;
  /** Closes the agent's connections (requests under way finish first). */
  close(): Promise<void>;
}

/** `host:port` with the scheme's default port filled in and IPv6 brackets dropped. */
export function originKey(hostname: string, port: string | number | undefined, protocol: string | undefined): string {
  const p = port === undefined || port === '' ? (protocol === 'https:' ? '443' : '80') : String(port);
  return `${hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${p}`;
}

// --- Node's bundled undici -------------------------------------------------------------------

/** What undici's Client hands a connector (undici 7, bundled with Node 24). */
interface ConnectParams {
  hostname: string;
  port: string;
  protocol: string;
  servername: string | null;
}
type Connector = (params: ConnectParams, callback: (err: Error | null, socket: Socket | null) => void) => void;

interface Agent {
  request(options: {
    origin: string;
    path: string;
    method: 'POST';
    headers: Record<string, string>;
    body: Uint8Array;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: { dump(): Promise<void> } }>;
  close(): Promise<void>;
}
type AgentClass = new (options: { connect: Connector; headersTimeout: number; bodyTimeout: number }) => Agent;

/** Where Node's fetch keeps its dispatcher (read here, never written). */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
let BundledAgent: AgentClass | undefined;

function bundledAgent(): AgentClass {
  if (BundledAgent) return BundledAgent;
  const globals = globalThis as unknown as Record<symbol, unknown>;
  // fetch's first call makes its default dispatcher (a data: URL goes nowhere).
  if (globals[GLOBAL_DISPATCHER] === undefined) void fetch('data:,').catch(() => undefined);
  const ctor = (globals[GLOBAL_DISPATCHER] as { constructor?: unknown } | undefined)?.constructor;
  if (typeof ctor !== 'function' || ctor.name !== 'Agent') {
    throw new Error("Node's bundled undici Agent is not reachable (fetch's dispatcher was replaced before Roost started): deliveries need it");
  }
  BundledAgent = ctor as AgentClass;
  return BundledAgent;
}

// --- the transport ---------------------------------------------------------------------------

export function createOutboundTransport(opts: TransportOptions): OutboundTransport {
  const own = new Set(opts.ownOrigins);
  const resolve = opts.lookup ?? (dnsLookup as unknown as LookupFunction);
  const connectTimeoutMs = Math.min(DEFAULT_CONNECT_TIMEOUT_MS, opts.timeoutMs);

  /** Opens a socket for undici, refusing a non-public address before any TCP connection is made. */
  const connect: Connector = (params, callback) => {
    const host = params.hostname.replace(/^\[|\]$/g, '');
    const https = params.protocol === 'https:';
    const allowed = opts.allowPrivateAddresses || own.has(originKey(host, params.port, params.protocol));
    // IP literals never go through the lookup: checked here.
    if (!allowed && isIP(host) && isNonPublicAddress(host)) {
      callback(new UnsafeUrlError(`${host} is not a public address: not delivered`), null);
      return;
    }
    const port = Number(params.port) || (https ? 443 : 80);
    const lookup = guardedLookup(allowed, resolve);
    const socket: Socket = https
      ? tls.connect({ host, port, lookup, servername: params.servername ?? (isIP(host) ? undefined : host) })
      : net.connect({ host, port, lookup });
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        socket.destroy();
        callback(err, null);
        return;
      }
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 60_000);
      callback(null, socket);
    };
    const timer = setTimeout(() => settle(new Error(`connect timeout after ${connectTimeoutMs} ms`)), connectTimeoutMs);
    socket.once(https ? 'secureConnect' : 'connect', () => settle(null));
    // Kept after connecting (a no-op then), as undici's own connector keeps it, until undici's handlers take over.
    socket.on('error', settle);
  };

  const agent = new (bundledAgent())({ connect, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });

  async function post({ inbox, body, digest, key }: SignedPost): Promise<PostAnswer> {
    // The wall clock, not services.clock: receivers (Fedify included) check the Date header
    // against theirs, and a test's jumped clock would make every signature stale. The lab gives
    // every instance its one clock as the signature clock, and receivers check against it.
    const date = (opts.signatureClock?.now() ?? new Date()).toUTCString();
    const target = `${inbox.pathname}${inbox.search}`;
    const signed = `(request-target): post ${target}\nhost: ${inbox.host}\ndate: ${date}\ndigest: ${digest}\ncontent-type: ${AS_TYPE}`;
    const signature = await new Promise<Buffer>((resolve, reject) =>
      cryptoSign('sha256', Buffer.from(signed), key.privateKey, (err, sig) => (err ? reject(err) : resolve(sig))),
    );
    const headers = {
      host: inbox.host,
      date,
      digest,
      'content-type': AS_TYPE,
      accept: AS_TYPE,
      'user-agent': opts.userAgent,
      signature: `keyId="${key.keyId}",algorithm="rsa-sha256",headers="(request-target) host date digest content-type",signature="${signature.toString('base64')}"`,
    };
    if (opts.network) {
      const answer = await opts.network({ method: 'POST', url: inbox, headers, body });
      return { status: answer.status, retryAfter: answer.headers['retry-after'] ?? null };
    }
    const res = await agent.request({ origin: inbox.origin, path: target, method: 'POST', headers, body });
    await res.body.dump().catch(() => undefined);
    const ra = res.headers['retry-after'];
    return { status: res.statusCode, retryAfter: Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null) };
  }

  return { post, close: () => agent.close() };
}
