// The uWS ↔ WHATWG bridge and the HTTP server.
//
// uWS rules followed here (see /work/shared/STACK.md): method, URL, query and headers are read
// synchronously in the uWS callback before anything async; exactly one onAborted per response,
// registered before the callback returns whenever the response is not finished synchronously;
// every onData chunk is copied (its ArrayBuffer is neutered after the callback); writes after an
// await happen inside res.cork; content-length / transfer-encoding / date are left to uWS;
// large bodies go out with tryEnd + onWritable; streamed bodies are written chunk by chunk and
// wait for onWritable when uWS reports backpressure.
//
// Hot path (GET, no body, handler returning json()): one HttpContext, one route lookup, the
// handler call, and a corked write of status + headers + the JSON string — no WHATWG Request,
// Headers, URL or AbortController unless the handler touches ctx.request/headers/url/signal.

import { randomUUID } from 'node:crypto';
import { createAccessLogWriter, type AccessLogWriter } from './access-log.ts';
import { STATUS_CODES } from 'node:http';
import type { Logger } from 'pino';
import { isMultipart, multipartBody, parseBody } from './body.ts';
import { BodyBudget, type BodyBudgetOptions } from './body-budget.ts';
import { UploadFiles } from './upload-files.ts';
import { tmpdir } from 'node:os';
import { open, type FileHandle } from 'node:fs/promises';
import { CORS_EXPOSE_HEADERS, CORS_MAX_AGE, corsRuleFor, sanitizeRequestedHeaders, type CorsRule } from './cors.ts';
import { HttpContext, type RequestContext } from './context.ts';
import { HttpError, isUnavailableError, unavailableError } from './errors.ts';
import { DEFAULT_MULTIPART_LIMITS, MultipartParser, type MultipartLimits } from './multipart.ts';
import { FileResponse, json, StringResponse } from './response.ts';
import { isMethodNotAllowed, type BeforeBody, type Handler, type Router } from './router.ts';
import net from 'node:net';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket, type WebSocket } from './uws.ts';
import type { WebSocketRoute, WsPeer, WsSession } from './websocket.ts';
import type { TrustedProxies } from '../lib/client-address.ts';

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port (see the returned `port`). */
  port: number;
  /** The routes; without one, every request gets a 503 until `serve()` hands them over. */
  router?: Router;
  /** Unmatched paths go here (Fedify's federation.fetch); default: JSON 404. */
  fallback?: Fallback;
  log: Logger;
  /**
   * Largest body of any type (JSON, urlencoded, multipart…) on a route that declares no limit of
   * its own (RouteOptions.maxBodyBytes); default 1 MiB → 413. Checked against Content-Length
   * before anything is read, and against the bytes received as they arrive.
   */
  maxBodyBytes?: number;
  /**
   * Largest multipart body on a route that declares no limit; default maxBodyBytes. Routes that
   * take uploads declare their own RouteOptions.maxBodyBytes instead.
   */
  maxUploadBytes?: number;
  /** Part/file limits inside a multipart body (maxFileBytes defaults to the route's body limit). */
  multipart?: Partial<MultipartLimits>;
  /**
   * A body must arrive whole within this many ms of the request head (408, then the connection
   * closes); default 30 s. (uWS's own cut of bodies slower than 16 KiB/s, after ~30 s, is held off
   * while a body is read: this deadline is the one that applies.)
   */
  bodyTimeoutMs?: number;
  /** Largest body the fallback takes (the federation inbox); default maxBodyBytes. */
  fallbackMaxBodyBytes?: number;
  /** The budget and per-address cap of unauthenticated bodies (body-budget.ts). */
  bodyBudget?: BodyBudgetOptions;
  /**
   * Where multipart file parts are written as they arrive (one temporary file each, removed once
   * the response is sent); default the system's temporary directory. It must exist.
   */
  uploadDir?: string;
  /** Absolute base used for ctx.url / request.url, e.g. 'https://example.com'; default http://<Host>. */
  publicUrl?: string;
  /** Mastodon's CORS policy on /api/* etc. (default true). */
  cors?: boolean;
  /** One info line per request (method, path, status, ms, reqId); default true. */
  accessLog?: boolean;
  /** Peers whose X-Forwarded-For names the client (ctx.remoteAddress); default none. */
  trustedProxies?: TrustedProxies;
  /** WebSocket routes on the same port (the streaming API; see websocket.ts). */
  ws?: WebSocketRoute[];
}

export type Fallback = (request: Request, ctx: RequestContext) => Promise<Response> | Response;

/**
 * Asked before the fallback, with the request as received (raw headers, ctx.rawBody) and no
 * WHATWG Request built: a Response answers, null hands the request on to the fallback (the
 * federation inbox's fast path, src/federation/inbox-fast.ts: building a Request and cloning its
 * body costs more than what the fast path does).
 */
export type PreFallback = (ctx: RequestContext) => Promise<Response | null> | Response | null;

export interface HttpServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /**
   * Hands the server its routes once the app behind them is built: a server binds its port first
   * (so a port in use stops a start before anything else is touched) and answers 503 until then.
   */
  serve(app: { router: Router; fallback?: Fallback; preFallback?: PreFallback }): void;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /** The budget of unauthenticated bodies: bytes reserved and refusals so far. */
  readonly bodyBudget: BodyBudget;
  /**
   * Sends a text frame to every WebSocket subscribed to `topic` (WsPeer.subscribe), the fan-out
   * done by uWS in C++; sockets past their backpressure bound are closed by uWS. The members are
   * those of the moment of the call (uWS queues the frame for each of them and writes the queues
   * when the event loop turns, or before anything else is sent to one of them), so a socket may
   * leave the topic just before and join it again just after to be passed by.
   */
  publish(topic: string, data: string): void;
  /**
   * Graceful shutdown: stop accepting connections, let in-flight requests finish for up to
   * `drainMs` (default 10 s; responses sent meanwhile carry Connection: close), then close every
   * remaining connection (still-running handlers see ctx.signal abort). Resolves when done;
   * calling it again returns the same promise.
   */
  close(opts?: { drainMs?: number }): Promise<void>;
}

const DEFAULT_MAX_BODY = 1024 * 1024;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** An unauthenticated chunked body grows its reservation by at least this much at a time. */
const RESERVE_STEP = 64 * 1024;
/**
 * uWS closes, silently, a connection whose body arrives slower than 16 KiB/s after about 30 s;
 * pausing and resuming a socket re-arms that timer, so bodies being read are re-armed this often
 * and the server's own deadline (408) is the one that applies.
 */
const UWS_TIMEOUT_REARM_MS = 5_000;
/**
 * A body announced by Content-Length up to this size gets one buffer at once; larger ones grow by
 * the chunks that actually arrive (a client announcing a large body and sending nothing pins nothing).
 */
const PREALLOCATE_MAX = 64 * 1024;
/** Files go out in reads of this size, the next read only once uWS took the previous one. */
const FILE_CHUNK = 64 * 1024;
/** Bodies above this many UTF-16 units go out with tryEnd/onWritable instead of one end(). */
const LARGE_BODY = 64 * 1024;
/** A Response body stream is buffered up to this size while it keeps producing without waiting. */
const MAX_STREAM_BUFFER = 16 * 1024 * 1024;

const METHODS_WITHOUT_ROUTE = new Set(['CONNECT', 'TRACE', 'TRACK']);
const SKIP_RESPONSE_HEADERS = new Set(['content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive']);
const CORS_RESPONSE_HEADERS = new Set(['access-control-allow-origin', 'access-control-expose-headers']);

const statusLines = new Map<number, string>();
function statusLine(status: number): string {
  let s = statusLines.get(status);
  if (s === undefined) {
    s = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    if (statusLines.size < 200) statusLines.set(status, s);
  }
  return s;
}

/** Rails' ActionDispatch::RequestId: keep [A-Za-z0-9_@-], at most 255 chars; else a new UUID. */
function requestId(incoming: string): string {
  if (incoming !== '') {
    const clean = /^[\w@-]{1,255}$/.test(incoming) ? incoming : incoming.replace(/[^\w@-]/g, '').slice(0, 255);
    if (clean !== '') return clean;
  }
  return randomUUID();
}

function errorResponse(status: number, message: string, headers?: Record<string, string>): Response {
  return new HttpError(status, message, undefined, headers).toResponse();
}

function tooLarge(limit: number): Response {
  return errorResponse(413, `Request body too large (limit ${limit} bytes)`);
}

const NO_HOOKS: readonly BeforeBody[] = Object.freeze([]);
const EMPTY_BODY = new Uint8Array(0);

// Header collection without a closure per request: uWS calls forEach synchronously.
let collecting: string[] = [];
function collectHeader(k: string, v: string): void {
  collecting.push(k, v);
}

const State = {
  // Exchange states
  READING: 0,
  HANDLING: 1,
  DONE: 2,
} as const;

class Server {
  readonly app: TemplatedApp;
  readonly opts: HttpServerOptions;
  /** Null until the app is handed over (serve): every request gets a 503 meanwhile. */
  router: Router | null;
  fallback: Fallback | null;
  preFallback: PreFallback | null = null;
  readonly log: Logger;
  readonly maxBody: number;
  readonly maxUpload: number;
  readonly bodyTimeoutMs: number;
  readonly multipartLimits: Partial<MultipartLimits>;
  readonly fallbackMaxBody: number;
  readonly budget: BodyBudget;
  readonly uploadDir: string;
  /** Exchanges reading a body (their uWS timeout is re-armed). */
  readonly reading = new Set<Exchange>();
  rearmTimer: NodeJS.Timeout | null = null;
  readonly publicBase: string | null;
  readonly cors: boolean;
  readonly accessLog: boolean;
  readonly trustedProxies: TrustedProxies | undefined;
  readonly writeAccessLog: AccessLogWriter;
  inFlight = 0;
  closing = false;
  listenSocket: us_listen_socket | null = null;
  port = 0;
  drained: (() => void) | null = null;
  /** The exchange being set up in onRequest (for its error path). */
  current: Exchange | null = null;

  constructor(app: TemplatedApp, opts: HttpServerOptions) {
    this.app = app;
    this.opts = opts;
    this.router = opts.router ?? null;
    this.fallback = opts.fallback ?? null;
    this.log = opts.log.child({ module: 'http' });
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
    this.maxUpload = opts.maxUploadBytes ?? this.maxBody;
    this.bodyTimeoutMs = opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
    this.multipartLimits = opts.multipart ?? {};
    this.fallbackMaxBody = opts.fallbackMaxBodyBytes ?? this.maxBody;
    this.budget = new BodyBudget(opts.bodyBudget);
    this.uploadDir = opts.uploadDir ?? tmpdir();
    if (opts.publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(opts.publicUrl)) {
      throw new Error(`publicUrl must be an absolute http(s) URL, got ${JSON.stringify(opts.publicUrl)}`);
    }
    this.publicBase = opts.publicUrl ? new URL(opts.publicUrl).origin : null;
    this.cors = opts.cors ?? true;
    this.accessLog = opts.accessLog ?? true;
    this.trustedProxies = opts.trustedProxies;
    this.writeAccessLog = createAccessLogWriter(this.log);
  }

  /** The uWS request callback. Everything up to the first await happens here. */
  onRequest(res: HttpResponse, req: HttpRequest): void {
    this.current = null;
    try {
      this.begin(res, req);
    } catch (err) {
      // A bug in this layer must not escape into uWS (it would take the process down).
      const ex = this.current as Exchange | null;
      if (ex === null) {
        this.log.error({ err }, 'request setup failed');
        res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('content-type', 'application/json; charset=utf-8').end('{"error":"Internal Server Error"}', true));
        return;
      }
      try {
        ex.fail(err);
        ex.hookAbortIfPending();
      } catch (err2) {
        this.log.error({ err: err2 }, 'request setup failed');
      }
    }
  }

  begin(res: HttpResponse, req: HttpRequest): Exchange {
    const start = performance.now();
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    collecting = [];
    req.forEach(collectHeader);
    const raw = collecting;

    let host: string | null = null;
    let incomingId = '';
    let contentType = '';
    let contentLength = -1;
    let lengths = 0;
    let chunked = false;
    let origin = false;
    for (let i = 0; i < raw.length; i += 2) {
      switch (raw[i]) {
        case 'host': host = raw[i + 1]; break;
        case 'x-request-id': incomingId = raw[i + 1]; break;
        case 'content-type': contentType = raw[i + 1]; break;
        case 'content-length': contentLength = Number(raw[i + 1]); lengths++; break;
        case 'transfer-encoding': chunked = true; break;
        case 'origin': origin = true; break;
      }
    }
    const reqId = requestId(incomingId);
    const ex = new Exchange(this, res, method, path, start, reqId, this.cors ? corsRuleFor(path) : null);
    this.current = ex;
    this.inFlight++;
    const ctx = new HttpContext(method, path, query, raw, reqId, this.publicBase ?? host, ex, this.log);
    ex.ctx = ctx;

    // Route.
    let handler: Handler | null = null;
    let useFallback = false;
    let limit = -1;
    let hooks: readonly BeforeBody[] = NO_HOOKS;
    if (lengths > 1) {
      // Two lengths: which one frames the body is anybody's guess (request smuggling). RFC 9112 §6.3.
      ex.respondSync(errorResponse(400, 'Duplicate Content-Length header'), true);
      return ex;
    }
    if (METHODS_WITHOUT_ROUTE.has(method)) {
      ex.respondSync(errorResponse(405, 'Method Not Allowed'));
      return ex;
    }
    if (this.router === null) {
      ex.respondSync(errorResponse(503, 'Roost is starting; try again in a moment', { 'retry-after': '2' }));
      return ex;
    }
    const m = this.router.match(method, path);
    if (m === null) {
      if (method === 'OPTIONS' && ex.cors !== null && origin) {
        ex.respondSync(ex.preflight(ctx));
        return ex;
      }
      if (this.fallback) useFallback = true;
      else {
        ex.respondSync(errorResponse(404, 'Not Found'));
        return ex;
      }
    } else if (isMethodNotAllowed(m)) {
      if (method === 'OPTIONS') {
        ex.respondSync(ex.cors !== null && origin ? ex.preflight(ctx) : new Response(null, { status: 204, headers: { allow: [...m.allowed, 'OPTIONS'].join(', ') } }));
        return ex;
      }
      ex.respondSync(errorResponse(405, 'Method Not Allowed', { allow: m.allowed.join(', ') }));
      return ex;
    } else {
      handler = m.handler;
      ctx.params = m.params;
      if (m.maxBodyBytes !== undefined) limit = m.maxBodyBytes;
      hooks = m.hooks;
    }

    // Body: refused on its announced size before a byte is read; the route's checks (token, rate
    // limits) run while the upload is paused.
    const hasBody = chunked || contentLength > 0;
    if (limit < 0) limit = useFallback ? this.fallbackMaxBody : isMultipart(contentType) ? this.maxUpload : this.maxBody;
    if (!hasBody) {
      if (hooks.length === 0) ex.run(handler, useFallback);
      else ex.runHooks(hooks, () => ex.run(handler, useFallback));
    } else {
      if (contentLength > limit) {
        ex.respondSync(tooLarge(limit), true);
        return ex;
      }
      ex.readBody(contentLength, limit, contentType, handler, useFallback, hooks);
    }
    ex.hookAbortIfPending();
    return ex;
  }

  /** Re-arm uWS's timeout of every body being read (see UWS_TIMEOUT_REARM_MS). */
  startRearming(): void {
    this.rearmTimer = setInterval(() => {
      for (const ex of this.reading) ex.rearmUwsTimeout();
    }, UWS_TIMEOUT_REARM_MS);
    this.rearmTimer.unref();
  }

  finished(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.drained !== null) this.drained();
  }
}

/** One request/response. Internal to the server. */
class Exchange {
  readonly server: Server;
  readonly res: HttpResponse;
  readonly method: string;
  readonly path: string;
  readonly start: number;
  readonly reqId: string;
  readonly cors: CorsRule | null;
  ctx!: HttpContext;
  state: number = State.HANDLING;
  /** True while still inside the uWS callback (writes are corked by uWS already). */
  sync = true;
  hooked = false;
  aborted = false;
  headersSent = false;
  status = 0;
  reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  writableWaiter: (() => void) | null = null;
  // body reading
  chunks: Uint8Array[] | null = null;
  buffer: Buffer | null = null;
  received = 0;
  /** The route's checks are still running: the body waits (paused) until they pass. */
  gated = false;
  /** The last chunk arrived. */
  bodyComplete = false;
  bodyTimer: NodeJS.Timeout | null = null;
  /** The upload is paused (res.pause) while the route's checks run. */
  paused = false;
  /** The upload is paused while its temporary files' writes catch up. */
  diskPaused = false;
  /** The body passed the budget checks (admit); until then it is held, not yet parsed. */
  admitted = false;
  /** Bytes reserved from the budget of unauthenticated bodies (released when the exchange ends). */
  reserved = 0;
  /** The client address holding one of its unauthenticated-body slots, or null. */
  slot: string | null = null;
  /** A multipart body parsed as it arrives, its files written to disk. */
  parser: MultipartParser | null = null;
  uploads: UploadFiles | null = null;
  contentLength = -1;
  limit = 0;

  constructor(server: Server, res: HttpResponse, method: string, path: string, start: number, reqId: string, cors: CorsRule | null) {
    this.server = server;
    this.res = res;
    this.method = method;
    this.path = path;
    this.start = start;
    this.reqId = reqId;
    this.cors = cors;
  }

  get trustedProxies(): TrustedProxies | undefined {
    return this.server.trustedProxies;
  }

  remoteAddress(): string {
    if (this.state === State.DONE || this.aborted) return '';
    return Buffer.from(this.res.getRemoteAddressAsText()).toString('latin1');
  }

  hookAbortIfPending(): void {
    this.sync = false;
    if (this.state !== State.DONE && !this.hooked) {
      this.hooked = true;
      this.res.onAborted(() => this.onAborted());
    }
  }

  onAborted(): void {
    if (this.aborted) return;
    this.aborted = true;
    const wasDone = this.state === State.DONE;
    this.state = State.DONE;
    this.ctx.abort();
    this.clearBodyTimer();
    if (this.reader !== null) this.reader.cancel(this.ctx.signal.reason).catch(() => {});
    if (this.writableWaiter !== null) this.writableWaiter();
    if (!wasDone) this.finish(499, true);
  }

  // ---- body ------------------------------------------------------------------------------

  /** Run the route's checks, then `next`; a failed check answers and closes the connection. */
  runHooks(hooks: readonly BeforeBody[], next: () => void): void {
    let i = 0;
    const step = (): void => {
      while (i < hooks.length) {
        if (this.state === State.DONE) return;
        let r: Promise<void> | void;
        try {
          r = hooks[i++](this.ctx);
        } catch (err) {
          this.failBeforeBody(err);
          return;
        }
        if (r !== undefined && typeof (r as Promise<void>).then === 'function') {
          (r as Promise<void>).then(step, (err) => this.failBeforeBody(err));
          return;
        }
      }
      if (this.state !== State.DONE) next();
    };
    step();
  }

  /** A refusal before the body was read: answer, and close unless the body is already in. */
  failBeforeBody(err: unknown): void {
    if (this.state === State.DONE) return;
    const reading = this.state === State.READING && !this.bodyComplete;
    this.state = State.HANDLING;
    this.clearBodyTimer();
    this.unpause();
    if (!reading) {
      this.fail(err);
      return;
    }
    let response: Response | null = err instanceof HttpError ? err.toResponse() : clientError(err);
    if (response === null) {
      this.fail(err);
      // (a 500 on a half-read body: the connection goes with it)
      if (this.state !== State.DONE) this.terminate();
      return;
    }
    this.respond(response, true);
  }

  readBody(contentLength: number, limit: number, contentType: string, handler: Handler | null, useFallback: boolean, hooks: readonly BeforeBody[]): void {
    this.state = State.READING;
    this.contentLength = contentLength;
    this.limit = limit;
    this.chunks = [];
    this.server.reading.add(this);
    const res = this.res;
    const streamMultipart = !useFallback && isMultipart(contentType);
    res.onData((chunk, isLast) => {
      if (this.state !== State.READING) return;
      const n = chunk.byteLength;
      if (this.received + n > limit) {
        this.refuseBody(tooLarge(limit));
        return;
      }
      if (contentLength >= 0 && this.received + n > contentLength) {
        this.refuseBody(errorResponse(400, 'Request body longer than Content-Length'));
        return;
      }
      // An unauthenticated body without a length grows its reservation before it grows.
      if (this.admitted && this.slot !== null && this.received + n > this.reserved && !this.grow(this.received + n)) return;
      if (this.parser !== null) {
        try {
          this.parser.push(Buffer.from(chunk.slice(0)));
        } catch (err) {
          this.refuseBody(err instanceof HttpError ? err.toResponse() : errorResponse(400, 'Malformed multipart body'));
          return;
        }
      } else if (this.buffer !== null) this.buffer.set(new Uint8Array(chunk), this.received);
      else if (n > 0) this.chunks!.push(Buffer.from(chunk.slice(0)));
      this.received += n;
      if (isLast) {
        this.bodyComplete = true;
        this.server.reading.delete(this);
        this.leaveSlot();
        if (!this.gated) this.bodyDone(contentType, handler, useFallback);
      }
    });
    this.bodyTimer = setTimeout(() => {
      this.bodyTimer = null;
      if (this.state !== State.READING) return;
      this.refuseBody(errorResponse(408, 'Request body not received in time'));
    }, this.server.bodyTimeoutMs);
    if (hooks.length === 0) {
      this.admit(streamMultipart, contentType);
      return;
    }
    // Hold the upload (TCP backpressure) until the token and the limits are checked, when a
    // check has to wait (a database lookup); checks that finish at once need no pause.
    this.gated = true;
    this.runHooks(hooks, () => {
      this.gated = false;
      if (this.state !== State.READING) return;
      if (!this.admit(streamMultipart, contentType)) return;
      // (resume even when the body is in: a paused socket would stall the next keep-alive request)
      this.unpause();
      if (this.bodyComplete) this.bodyDone(contentType, handler, useFallback);
    });
    if (this.gated && this.state === State.READING) {
      this.paused = true;
      res.pause();
    }
  }

  /**
   * The body may be buffered: unless a check before the body vouched for the request, it takes one
   * of its address's slots (429 beyond) and reserves its length from the budget of unauthenticated
   * bodies (503 beyond). Then its buffer, or its multipart parser, is set up. False when refused.
   */
  admit(streamMultipart: boolean, contentType: string): boolean {
    const budget = this.server.budget;
    if (!this.ctx.authenticated) {
      const address = this.ctx.remoteAddress;
      if (!budget.enter(address)) {
        this.refuseBody(errorResponse(429, 'Too many requests', { 'retry-after': '5' }));
        return false;
      }
      this.slot = address;
      // (a chunked body reserves a first step; grow() takes more as it arrives)
      const want = this.contentLength >= 0 ? this.contentLength : Math.min(this.limit, Math.max(this.received, RESERVE_STEP));
      if (!budget.reserve(want)) {
        this.refuseBody(errorResponse(503, 'Too many requests in flight; try again later', { 'retry-after': '5' }));
        return false;
      }
      this.reserved = want;
    }
    this.admitted = true;
    const early = this.chunks!;
    if (streamMultipart) {
      try {
        this.uploads = new UploadFiles(this.server.uploadDir, (full) => this.diskPressure(full));
        this.parser = new MultipartParser(contentType, this.multipartLimits(this.limit), this.uploads.open);
        for (const c of early) this.parser.push(c as Buffer);
      } catch (err) {
        this.refuseBody(err instanceof HttpError ? err.toResponse() : errorResponse(400, 'Malformed multipart body'));
        return false;
      }
      this.chunks = null;
    } else if (this.contentLength > 0 && this.contentLength <= PREALLOCATE_MAX && !this.bodyComplete) {
      this.buffer = Buffer.allocUnsafe(this.contentLength);
      let at = 0;
      for (const c of early) {
        this.buffer.set(c, at);
        at += c.byteLength;
      }
      this.chunks = null;
    }
    return true;
  }

  multipartLimits(limit: number): MultipartLimits {
    return { ...DEFAULT_MULTIPART_LIMITS, maxFileBytes: limit, ...this.server.multipartLimits };
  }

  /** Reserve up to `needed` bytes for an unauthenticated body; false (503 sent) when the budget is spent. */
  grow(needed: number): boolean {
    const more = Math.max(needed - this.reserved, Math.min(RESERVE_STEP, this.limit - this.reserved));
    if (!this.server.budget.reserve(more)) {
      this.refuseBody(errorResponse(503, 'Too many requests in flight; try again later', { 'retry-after': '5' }));
      return false;
    }
    this.reserved += more;
    return true;
  }

  /** Stop reading a body and answer (413, 408, 429, 503…); the connection closes. */
  refuseBody(response: Response): void {
    this.state = State.HANDLING;
    this.gated = false;
    this.dropBody();
    this.unpause();
    this.respond(response, true);
  }

  /** A temporary file's writes are behind (pause the upload) or caught up (resume it). */
  diskPressure(full: boolean): void {
    if (this.aborted || this.state === State.DONE) return;
    if (full && !this.diskPaused) {
      this.diskPaused = true;
      if (!this.paused) this.res.pause();
    } else if (!full && this.diskPaused) {
      this.diskPaused = false;
      if (!this.paused) this.res.resume();
    }
  }

  /** uWS cuts a slow body after ~30 s: a pause and resume re-arms its timer (ours, bodyTimer, decides). */
  rearmUwsTimeout(): void {
    if (this.aborted || this.state !== State.READING || this.paused || this.diskPaused) return;
    this.res.pause();
    this.res.resume();
  }

  unpause(): void {
    if (this.paused) {
      this.paused = false;
      if (!this.aborted && !this.diskPaused) this.res.resume();
    }
  }

  dropBody(): void {
    this.clearBodyTimer();
    this.server.reading.delete(this);
    this.leaveSlot();
    this.buffer = null;
    this.chunks = null;
    this.parser = null;
  }

  leaveSlot(): void {
    if (this.slot !== null) {
      this.server.budget.leave(this.slot);
      this.slot = null;
    }
  }

  /** The exchange ended (any way): its reservation goes back, its temporary files go. */
  releaseBody(): void {
    this.dropBody();
    if (this.reserved > 0) {
      this.server.budget.release(this.reserved);
      this.reserved = 0;
    }
    if (this.uploads !== null) {
      this.uploads.remove();
      this.uploads = null;
    }
  }

  clearBodyTimer(): void {
    if (this.bodyTimer !== null) {
      clearTimeout(this.bodyTimer);
      this.bodyTimer = null;
    }
  }

  bodyDone(contentType: string, handler: Handler | null, useFallback: boolean): void {
    this.clearBodyTimer();
    this.state = State.HANDLING;
    const ctx = this.ctx;
    const parser = this.parser;
    if (parser !== null) {
      // A multipart body: its files are on disk once their writes are done.
      this.parser = null;
      this.chunks = null;
      let result: ReturnType<MultipartParser['end']>;
      try {
        result = parser.end();
      } catch (err) {
        this.fail(err);
        return;
      }
      ctx.rawBody = EMPTY_BODY;
      this.uploads!.written().then(
        () => {
          if (this.state === State.DONE) return;
          try {
            const parsed = multipartBody(result.fields, result.files);
            ctx.body = parsed.body;
            ctx.files = parsed.files;
          } catch (err) {
            this.fail(err);
            return;
          }
          this.run(handler, false);
        },
        (err) => this.fail(err),
      );
      return;
    }
    const body = this.buffer !== null ? this.buffer.subarray(0, this.received) : Buffer.concat(this.chunks!, this.received);
    this.buffer = null;
    this.chunks = null;
    ctx.rawBody = body;
    if (!useFallback) {
      try {
        const parsed = parseBody(contentType, body, this.multipartLimits(body.length));
        ctx.body = parsed.body;
        ctx.files = parsed.files;
      } catch (err) {
        this.fail(err);
        return;
      }
    }
    this.run(handler, useFallback);
  }

  // ---- handling --------------------------------------------------------------------------

  run(handler: Handler | null, useFallback: boolean): void {
    let result: Promise<Response> | Response;
    try {
      if (useFallback) result = this.runFallback();
      else result = handler!(this.ctx);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (result instanceof Response) this.respond(result);
    else if (result !== null && typeof (result as Promise<Response>).then === 'function') {
      (result as Promise<Response>).then(
        (r) => this.respond(r),
        (err) => this.fail(err),
      );
    } else this.fail(new TypeError(`handler for ${this.method} ${this.path} returned ${typeof result}, not a Response`));
  }

  /** The pre-fallback first (if any), then, when it hands on (null), the fallback. */
  runFallback(): Promise<Response> | Response {
    const server = this.server;
    const pre = server.preFallback;
    if (pre === null) return server.fallback!(this.ctx.request, this.ctx);
    const first = pre(this.ctx);
    if (first === null) return server.fallback!(this.ctx.request, this.ctx);
    if (first instanceof Response) return first;
    return first.then((r) => r ?? server.fallback!(this.ctx.request, this.ctx));
  }

  fail(err: unknown): void {
    if (this.state === State.DONE) return;
    if (err instanceof HttpError) {
      this.respond(err.toResponse());
      return;
    }
    const client = clientError(err);
    if (client !== null) {
      if (client.status === 503) this.server.log.warn({ reqId: this.reqId, method: this.method, path: this.path, error: (err as Error).message }, 'database unavailable: answered 503');
      this.respond(client);
      return;
    }
    if (this.aborted || (err instanceof Error && err.name === 'AbortError' && this.ctx.aborted)) return;
    this.server.log.error({ err, reqId: this.reqId, method: this.method, path: this.path }, 'unhandled error in request handler');
    if (this.headersSent) {
      // Too late for a status: cut the connection so the client sees a truncated body.
      this.terminate();
      return;
    }
    this.respond(errorResponse(500, 'Internal Server Error'));
  }

  /** Respond while still inside the uWS callback (errors found before any handler ran). */
  respondSync(response: Response, closeConnection = false): void {
    this.respond(response, closeConnection);
    this.sync = false;
  }

  /** Send a Response. Never throws (a failure here is logged and the connection cut). */
  respond(response: Response, closeConnection = false): void {
    try {
      this.respondInner(response, closeConnection);
    } catch (err) {
      this.server.log.error({ err, reqId: this.reqId, method: this.method, path: this.path }, 'failed to write response');
      if (this.state !== State.DONE) {
        this.state = State.DONE;
        this.finish(500, false);
        if (!this.aborted) this.res.close();
      }
    }
  }

  respondInner(response: Response, closeConnection: boolean): void {
    const isResponse = response instanceof Response;
    if (this.state === State.DONE) {
      // Aborted meanwhile: release a streamed body nobody will read.
      if (isResponse && !(response instanceof StringResponse) && response.body !== null) response.body.cancel().catch(() => {});
      return;
    }
    if (!isResponse) {
      this.fail(new TypeError(`handler for ${this.method} ${this.path} did not return a Response`));
      return;
    }
    const close = closeConnection || this.server.closing;
    if (response instanceof FileResponse) {
      this.sendFile(response).catch((err) => this.fail(err));
      return;
    }
    const str = StringResponse.peek(response);
    if (str !== undefined) {
      this.cork(() => this.sendString(response, str, close));
    } else if (response.body === null) {
      this.cork(() => this.sendString(response, '', close));
    } else {
      this.sendStream(response, response.body, close).catch((err) => this.fail(err));
    }
  }

  cork(fn: () => void): void {
    if (this.sync) fn();
    else this.res.cork(fn);
  }

  writeHead(response: Response): void {
    const res = this.res;
    const status = response.status;
    this.status = status;
    res.writeStatus(statusLine(status));
    const onlyType = response instanceof StringResponse ? StringResponse.untouchedType(response) : null;
    if (onlyType !== null) res.writeHeader('content-type', onlyType);
    else {
      // On a CORS path the server writes the CORS headers itself, once: a handler's own (Fedify's
      // WebFinger sends `Access-Control-Allow-Origin: *` too) would make it a duplicate, which
      // browsers refuse.
      const cors = this.cors !== null;
      for (const [k, v] of response.headers) {
        if (!SKIP_RESPONSE_HEADERS.has(k) && !(cors && CORS_RESPONSE_HEADERS.has(k))) res.writeHeader(k, v);
      }
    }
    res.writeHeader('x-request-id', this.reqId);
    const extra = this.ctx.responseHeaders;
    if (extra !== null) {
      // (the response's own value wins: a 429 names the limit that tripped)
      for (let i = 0; i < extra.length; i += 2) if (onlyType !== null || !response.headers.has(extra[i])) res.writeHeader(extra[i], extra[i + 1]);
    }
    if (this.cors !== null) {
      res.writeHeader('access-control-allow-origin', '*');
      res.writeHeader('access-control-expose-headers', CORS_EXPOSE_HEADERS);
    }
    this.headersSent = true;
  }

  sendString(response: Response, body: string, close: boolean): void {
    if (this.state === State.DONE) return;
    const res = this.res;
    this.writeHead(response);
    const status = response.status;
    if (this.method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) {
      this.state = State.DONE;
      this.endWithoutBody(status, this.method === 'HEAD' ? Buffer.byteLength(body) : -1, close);
      this.finish(status, false);
      return;
    }
    if (body.length <= LARGE_BODY) {
      this.state = State.DONE;
      res.end(body, close);
      this.finish(status, false);
      return;
    }
    this.sendLarge(Buffer.from(body), close);
  }

  /**
   * End without a body. `length` ≥ 0 is announced as Content-Length (HEAD); 204/304/1xx and
   * unknown lengths get none (uWS writes Content-Length whenever an argument is passed, so the
   * close flag is sent as a header instead).
   */
  endWithoutBody(status: number, length: number, close: boolean): void {
    const res = this.res;
    if (length >= 0 && status !== 204 && status !== 304 && status >= 200) {
      res.endWithoutBody(length, close);
      return;
    }
    if (close) res.writeHeader('connection', 'close');
    res.endWithoutBody();
  }

  /** A complete body too large for one end(): tryEnd, continue in onWritable. Call corked. */
  sendLarge(buf: Uint8Array, close: boolean): void {
    const res = this.res;
    const total = buf.byteLength;
    const base = res.getWriteOffset();
    // (`close` is not applied to large bodies: tryEnd cannot close; shutdown closes the socket.)
    void close;
    const [, done] = res.tryEnd(buf, total);
    if (done) {
      this.state = State.DONE;
      this.finish(this.status, false);
      return;
    }
    this.needAbortHook();
    res.onWritable((offset) => {
      if (this.state === State.DONE) return true;
      const [ok, finished] = res.tryEnd(buf.subarray(offset - base), total);
      if (finished) {
        this.state = State.DONE;
        this.finish(this.status, false);
      }
      return ok;
    });
  }

  needAbortHook(): void {
    if (!this.hooked) {
      if (!this.sync) throw new Error('internal: onAborted must be registered inside the uWS callback');
      this.hooked = true;
      this.res.onAborted(() => this.onAborted());
    }
  }

  /** A Response with a body stream: buffered if it completes at once, else chunked as it comes. */
  async sendStream(response: Response, stream: ReadableStream<Uint8Array>, close: boolean): Promise<void> {
    this.needAbortHook();
    const reader = stream.getReader();
    this.reader = reader;
    const isHead = this.method === 'HEAD';
    const buffered: Uint8Array[] = [];
    let size = 0;
    let pending = reader.read();
    let complete = false;
    // Collect what the stream yields without waiting (a body that already exists: a string, a
    // buffer, a serialized document) to send it with Content-Length; the first read that has to
    // wait for a later event-loop turn means a live stream (SSE…): send chunked from then on.
    for (;;) {
      const r = await raceImmediate(pending);
      if (this.state === State.DONE) return;
      if (r === WAIT) break;
      if (r.done) {
        complete = true;
        break;
      }
      const chunk = toBytes(r.value);
      buffered.push(chunk);
      size += chunk.byteLength;
      pending = reader.read();
      if (size > MAX_STREAM_BUFFER) break;
    }
    if (complete || isHead) {
      if (!complete) reader.cancel().catch(() => {});
      this.reader = null;
      this.res.cork(() => {
        if (this.state === State.DONE) return;
        const status = response.status;
        this.writeHead(response);
        if (isHead || status === 204 || status === 304) {
          this.state = State.DONE;
          this.endWithoutBody(status, isHead && complete ? size : -1, close);
          this.finish(status, false);
          return;
        }
        const body = buffered.length === 1 ? buffered[0] : Buffer.concat(buffered, size);
        if (body.byteLength <= LARGE_BODY) {
          this.state = State.DONE;
          this.res.end(body, close);
          this.finish(status, false);
        } else this.sendLarge(body, close);
      });
      return;
    }

    // Live stream: headers now, then chunk by chunk (chunked transfer-encoding).
    // (uWS sends the headers with the first chunk: an SSE stream should start with a comment
    // line, as Mastodon's streaming server does with ":)", so clients see the response at once.)
    let ok = true;
    this.res.cork(() => {
      if (this.state === State.DONE) return;
      this.writeHead(response);
      for (const c of buffered) ok = this.res.write(c);
    });
    for (;;) {
      if (!ok) await this.writable();
      if (this.state === State.DONE) return;
      let r: Awaited<typeof pending>;
      try {
        r = await pending;
      } catch (err) {
        if (this.state === State.DONE) return;
        this.server.log.error({ err, reqId: this.reqId, method: this.method, path: this.path }, 'response stream failed');
        this.reader = null;
        this.terminate();
        return;
      }
      if (this.state === State.DONE) return;
      if (r.done) {
        this.reader = null;
        this.res.cork(() => {
          if (this.state === State.DONE) return;
          this.state = State.DONE;
          this.res.end(undefined, close);
          this.finish(this.status, false);
        });
        return;
      }
      const chunk = toBytes(r.value);
      this.res.cork(() => {
        if (this.state !== State.DONE) ok = this.res.write(chunk);
      });
      pending = reader.read();
    }
  }

  /**
   * A file from disk with Content-Length, read FILE_CHUNK bytes at a time: the next read starts
   * only when uWS has taken the previous chunk (tryEnd, then onWritable under backpressure), so a
   * reader that stalls holds one chunk, not the file.
   */
  async sendFile(response: FileResponse): Promise<void> {
    this.needAbortHook();
    const { path, size, start } = response.file;
    const status = response.status;
    if (this.method === 'HEAD' || size === 0 || status === 304) {
      this.res.cork(() => {
        if (this.state === State.DONE) return;
        this.writeHead(response);
        this.state = State.DONE;
        if (this.method === 'HEAD' || status === 304) this.endWithoutBody(status, status === 304 ? -1 : size, false);
        else this.res.end('');
        this.finish(status, false);
      });
      return;
    }
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch {
      this.respond(errorResponse(404, 'Record not found'));
      return;
    }
    try {
      const buf = Buffer.allocUnsafe(Math.min(FILE_CHUNK, size));
      let pos = 0;
      let first = true;
      while (pos < size) {
        if (this.state === State.DONE) return;
        const want = Math.min(buf.length, size - pos);
        const { bytesRead } = await fh.read(buf, 0, want, start + pos);
        if (this.state === State.DONE) return;
        if (bytesRead === 0) {
          // The file shrank under us: too late for a status.
          if (first) this.respond(errorResponse(404, 'Record not found'));
          else this.terminate();
          return;
        }
        const done = await this.pushChunk(response, buf.subarray(0, bytesRead), size, first);
        first = false;
        pos += bytesRead;
        if (done) return;
      }
    } finally {
      await fh.close().catch(() => {});
    }
  }

  /** tryEnd one chunk (headers first); resolves when uWS took all of it, true once the response is done. */
  pushChunk(response: Response, chunk: Uint8Array, total: number, first: boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const res = this.res;
      const settle = (ok: boolean, done: boolean): boolean => {
        if (done) {
          this.writableWaiter = null;
          if (this.state !== State.DONE) {
            this.state = State.DONE;
            this.finish(this.status, false);
          }
          resolve(true);
        } else if (ok) {
          this.writableWaiter = null;
          resolve(false);
        }
        return ok;
      };
      res.cork(() => {
        if (this.state === State.DONE) return resolve(true);
        if (first) this.writeHead(response);
        const base = res.getWriteOffset();
        const [ok, done] = res.tryEnd(chunk, total);
        if (ok || done) {
          settle(ok, done);
          return;
        }
        this.writableWaiter = () => resolve(true);
        res.onWritable((offset) => {
          if (this.state === State.DONE) {
            resolve(true);
            return true;
          }
          const [ok2, done2] = res.tryEnd(chunk.subarray(offset - base), total);
          return settle(ok2, done2);
        });
      });
    });
  }

  /** Close the connection mid-response (headers already sent). */
  terminate(): void {
    if (this.state === State.DONE) return;
    this.state = State.DONE;
    this.finish(this.status, false);
    this.res.close(); // runs onAborted, which sees DONE
  }

  writable(): Promise<void> {
    return new Promise((resolve) => {
      this.writableWaiter = () => {
        this.writableWaiter = null;
        resolve();
      };
      this.res.onWritable(() => {
        this.writableWaiter?.();
        return true;
      });
    });
  }

  preflight(ctx: HttpContext): Response {
    const headers: Record<string, string> = {
      'access-control-allow-methods': this.cors!.methods,
      'access-control-max-age': CORS_MAX_AGE,
    };
    const requested = ctx.header('access-control-request-headers');
    if (requested) {
      const allow = sanitizeRequestedHeaders(requested);
      if (allow) headers['access-control-allow-headers'] = allow;
    }
    return new Response(null, { status: 200, headers });
  }

  finish(status: number, aborted: boolean): void {
    this.releaseBody();
    this.server.finished();
    if (this.server.accessLog) {
      const ms = Math.round((performance.now() - this.start) * 100) / 100;
      this.server.writeAccessLog(this.reqId, this.method, this.path, status, ms, aborted);
    }
  }
}

/**
 * Errors from layers that must not import src/http (services' RoostError…) render the same way
 * when they carry a status 400–599 and a Mastodon body `{ error: string, … }`.
 */
function clientError(err: unknown): Response | null {
  if (typeof err !== 'object' || err === null) return null;
  // The database unreachable: 503 with Retry-After, whatever wrapped the error.
  if (isUnavailableError(err)) return unavailableError().toResponse();
  const { status, body } = err as { status?: unknown; body?: unknown };
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) return null;
  if (typeof body !== 'object' || body === null || typeof (body as { error?: unknown }).error !== 'string') return null;
  const { headers } = err as { headers?: unknown };
  if (typeof headers === 'object' && headers !== null && Object.values(headers).every((v) => typeof v === 'string')) {
    return json(body, { status, headers: headers as Record<string, string> });
  }
  return json(body, { status });
}

const WAIT = Symbol('wait');

/** The read result if it arrives before the event loop turns, else WAIT (the read stays pending). */
function raceImmediate<T>(p: Promise<T>): Promise<T | typeof WAIT> {
  return new Promise((resolve, reject) => {
    const t = setImmediate(resolve, WAIT);
    p.then(
      (v) => { clearImmediate(t); resolve(v); },
      (e) => { clearImmediate(t); reject(e); },
    );
  });
}

function toBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return Buffer.from(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw new TypeError('response body chunks must be Uint8Array');
}

interface WsData {
  session: WsSession;
  peer: SocketPeer | null;
}

/** The WsPeer over one uWS socket: sends are corked, a socket over its backpressure bound is closed. */
class SocketPeer implements WsPeer {
  ws: WebSocket<WsData>;
  open = true;
  readonly limit: number;
  constructor(ws: WebSocket<WsData>, limit: number) {
    this.ws = ws;
    this.limit = limit;
  }
  get bufferedAmount(): number {
    return this.open ? this.ws.getBufferedAmount() : 0;
  }
  send(data: string | Uint8Array): boolean {
    if (!this.open) return false;
    // One frame, one write: uWS writes an uncorked send at once (1 sent, 0 partly buffered, 2 dropped).
    const status = this.ws.send(data, typeof data !== 'string');
    if (status === 1) return true;
    if (status === 2 || this.ws.getBufferedAmount() > this.limit) {
      // A slow client: dropped, not buffered forever.
      this.close(1013, 'Too slow');
      return false;
    }
    return true;
  }
  subscribe(topic: string): void {
    if (this.open) this.ws.subscribe(topic);
  }
  unsubscribe(topic: string): void {
    if (this.open) this.ws.unsubscribe(topic);
  }
  close(code = 1000, reason = ''): void {
    if (!this.open) return;
    this.open = false;
    try {
      this.ws.end(code, reason);
    } catch {
      // already closed
    }
  }
}

const WS_DEFAULT_MAX_PAYLOAD = 16 * 1024;
const WS_DEFAULT_IDLE_SECONDS = 120;
const WS_DEFAULT_MAX_BACKPRESSURE = 1024 * 1024;

function registerWebSocketRoute(app: TemplatedApp, server: Server, route: WebSocketRoute): void {
  const limit = route.maxBackpressureBytes ?? WS_DEFAULT_MAX_BACKPRESSURE;
  app.ws<WsData>(route.pattern, {
    maxPayloadLength: route.maxPayloadLength ?? WS_DEFAULT_MAX_PAYLOAD,
    idleTimeout: route.idleTimeoutSeconds ?? WS_DEFAULT_IDLE_SECONDS,
    sendPingsAutomatically: true,
    // uWS itself closes a socket whose buffer passes twice the bound (WsPeer.send closes it at the bound).
    maxBackpressure: limit * 2,
    closeOnBackpressureLimit: true,
    upgrade: (res, req, context) => {
      const method = req.getCaseSensitiveMethod();
      const path = req.getUrl();
      const query = req.getQuery() ?? '';
      collecting = [];
      req.forEach(collectHeader);
      const raw = collecting;
      let host: string | null = null;
      let incomingId = '';
      let key = '';
      let protocol = '';
      let extensions = '';
      for (let i = 0; i < raw.length; i += 2) {
        switch (raw[i]) {
          case 'host': host = raw[i + 1]; break;
          case 'x-request-id': incomingId = raw[i + 1]; break;
          case 'sec-websocket-key': key = raw[i + 1]; break;
          case 'sec-websocket-protocol': protocol = raw[i + 1]; break;
          case 'sec-websocket-extensions': extensions = raw[i + 1]; break;
        }
      }
      const start = performance.now();
      const reqId = requestId(incomingId);
      let aborted = false;
      let remote: string | null = null;
      try {
        remote = Buffer.from(res.getRemoteAddressAsText()).toString('latin1');
      } catch {
        remote = '';
      }
      const source = { remoteAddress: () => remote ?? '', trustedProxies: server.trustedProxies };
      const ctx = new HttpContext(method, path, query, raw, reqId, server.publicBase ?? host, source, server.log);
      res.onAborted(() => {
        aborted = true;
        ctx.abort();
      });
      const refuse = async (response: Response) => {
        const body = await response.text().catch(() => '');
        if (aborted) return;
        res.cork(() => {
          res.writeStatus(statusLine(response.status));
          response.headers.forEach((v, k) => {
            if (!SKIP_RESPONSE_HEADERS.has(k)) res.writeHeader(k, v);
          });
          res.writeHeader('x-request-id', reqId);
          res.end(body, true);
        });
        if (server.accessLog) server.writeAccessLog(reqId, method, path, response.status, Math.round((performance.now() - start) * 100) / 100, false);
      };
      void (async () => {
        let accepted: WsSession | Response;
        try {
          accepted = await route.accept(ctx);
        } catch (err) {
          accepted = clientError(err) ?? errorResponse(500, 'Internal Server Error');
          if (accepted.status === 500) server.log.error({ err, reqId, path }, 'websocket upgrade failed');
        }
        if (aborted) {
          if (!(accepted instanceof Response)) accepted.cancel?.();
          return;
        }
        if (accepted instanceof Response) return refuse(accepted);
        const session = accepted;
        // Echo the first protocol the client offered (the token, for Mastodon clients).
        const echo = protocol.split(',')[0]?.trim() ?? '';
        res.cork(() => {
          res.upgrade<WsData>({ session, peer: null }, key, echo, extensions, context);
        });
        if (server.accessLog) server.writeAccessLog(reqId, method, path, 101, Math.round((performance.now() - start) * 100) / 100, false);
      })().catch((err) => server.log.error({ err, reqId, path }, 'websocket upgrade failed'));
    },
    open: (ws) => {
      const data = ws.getUserData();
      const peer = new SocketPeer(ws, limit);
      data.peer = peer;
      try {
        data.session.open?.(peer);
      } catch (err) {
        server.log.error({ err }, 'websocket open handler failed');
        peer.close(1011, 'Internal error');
      }
    },
    message: (ws, message, isBinary) => {
      const data = ws.getUserData();
      if (data.peer === null || !data.peer.open) return;
      // The message's ArrayBuffer is only valid during this callback: copy it.
      const bytes = new Uint8Array(message.byteLength);
      bytes.set(new Uint8Array(message));
      try {
        data.session.message?.(data.peer, bytes, isBinary);
      } catch (err) {
        server.log.error({ err }, 'websocket message handler failed');
      }
    },
    drain: (ws) => {
      const data = ws.getUserData();
      if (data.peer !== null) data.session.drain?.(data.peer);
    },
    close: (ws, code) => {
      const data = ws.getUserData();
      const peer = data.peer;
      if (peer === null) return;
      peer.open = false;
      try {
        data.session.close?.(peer, code);
      } catch (err) {
        server.log.error({ err }, 'websocket close handler failed');
      }
    },
  });
}

const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** A port that cannot be bound; `code` is the errno (EADDRINUSE, EACCES, EADDRNOTAVAIL…). */
export class ListenError extends Error {
  override name = 'ListenError';
  readonly code: string;
  readonly host: string;
  readonly port: number;
  constructor(message: string, code: string, host: string, port: number) {
    super(message);
    this.code = code;
    this.host = host;
    this.port = port;
  }
}

/** uWS says only "no": ask the kernel why, by binding the same address with node:net. */
async function listenError(host: string, port: number): Promise<ListenError> {
  const code = await new Promise<string>((resolve) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'UNKNOWN'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve('UNKNOWN')));
  });
  const where = `${host}:${port}`;
  const why =
    code === 'EADDRINUSE'
      ? 'is already in use by another process'
      : code === 'EACCES'
        ? 'needs privileges this process does not have'
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
          ? 'is not an address of this machine'
          : `cannot be listened on (${code})`;
  return new ListenError(`could not listen: ${where} ${why}`, code, host, port);
}

/** Start the HTTP server. Resolves once it listens; throws a ListenError when it cannot. */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const uws = loadUws();
  const app = uws.App();
  const server = new Server(app, opts);
  server.startRearming();
  // WebSocket routes before the catch-all.
  for (const route of opts.ws ?? []) registerWebSocketRoute(app, server, route);
  app.any('/*', (res, req) => server.onRequest(res, req));

  // Exclusively: uWS binds with SO_REUSEPORT by default, which lets a second server share the port
  // and the kernel split the requests between them.
  const listenSocket = await new Promise<us_listen_socket | false>((resolve) => {
    // The native listen takes (host, port, options, cb); the bundled typings lack that overload.
    (app.listen as unknown as (h: string, p: number, o: number, cb: (s: us_listen_socket | false) => void) => void)(
      opts.host,
      opts.port,
      LIBUS_LISTEN_EXCLUSIVE_PORT,
      (s) => resolve(s),
    );
  });
  if (!listenSocket) throw await listenError(opts.host, opts.port);
  server.listenSocket = listenSocket;
  server.port = uws.us_socket_local_port(listenSocket);
  // Bound, not ready: requests get 503 until the app is handed over; "ready" is logged once, by
  // the composition root, when it is (src/main.ts).
  server.log.debug({ host: opts.host, port: server.port }, 'port bound; answering 503 until ready');

  let closing: Promise<void> | null = null;
  return {
    get port() {
      return server.port;
    },
    serve(handed) {
      server.fallback = handed.fallback ?? null;
      server.preFallback = handed.fallback ? (handed.preFallback ?? null) : null;
      server.router = handed.router;
    },
    get inFlight() {
      return server.inFlight;
    },
    get bodyBudget() {
      return server.budget;
    },
    publish(topic: string, data: string) {
      app.publish(topic, data, false, false);
    },
    close(closeOpts?: { drainMs?: number }): Promise<void> {
      closing ??= (async () => {
        const drainMs = closeOpts?.drainMs ?? 10_000;
        server.closing = true;
        if (server.rearmTimer !== null) clearInterval(server.rearmTimer);
        if (server.listenSocket !== null) {
          uws.us_listen_socket_close(server.listenSocket);
          server.listenSocket = null;
        }
        if (server.inFlight > 0) {
          server.log.info({ inFlight: server.inFlight, drainMs }, 'draining in-flight requests');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, drainMs);
            server.drained = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          server.drained = null;
        }
        const left = server.inFlight;
        app.close(); // closes keep-alive and any still-running requests (their signal aborts)
        server.log.info({ abandoned: left }, 'http server closed');
      })();
      return closing;
    },
  };
}
