/**
 * The streaming API's endpoints (methods/streaming.md):
 *   GET /api/v1/streaming (WebSocket upgrade): token as `Authorization: Bearer`, as
 *     `Sec-WebSocket-Protocol`, or `access_token`; `stream` (+ tag/list) subscribes at once; then
 *     {"type":"subscribe"|"unsubscribe","stream":…,"tag"|"list":…} messages. A bad message gets an
 *     error frame {"error":…,"status":…}; the socket stays open.
 *   GET /api/v1/streaming/<user|user/notification|public|public/local|public/remote|hashtag|
 *     hashtag/local|list|direct> and /api/v1/streaming?stream=… : server-sent events.
 *   GET /api/v1/streaming/health → OK.
 * A subscription refused for the token's scopes gets its error frame, and then the socket is closed.
 * Resume: `last_event_id` (query) or `Last-Event-ID` (header): the missed events are sent first.
 * Limits: a WebSocket upgrade counts against the rate limits as any API request does (the SSE
 * endpoints are counted by the router's guard), and an account holds at most
 * `streaming.maxConnectionsPerAccount` streaming connections, WebSocket and SSE together, in one
 * process: past it, 429 {"error":"Too many requests"}.
 * SSE heartbeats are `:thump` comment lines; WebSockets are pinged by uWS.
 */
import type { Services } from '../context.ts';
import type { RequestContext, Router, WebSocketRoute, WsPeer } from '../http/index.ts';
import { viewerForToken, type Viewer } from '../services/tokens.ts';
import { countRequest, skipsTokenLookup } from '../services/rate-limits.ts';
import { streamingHubOf, type StreamClient, type StreamingHub } from './hub.ts';
import { resolveStream, StreamError, StreamScopeError, type ResolvedStream } from './streams.ts';

/** SSE heartbeat interval (Mastodon: 15 s). */
export const SSE_HEARTBEAT_MS = 15_000;
/** An SSE client with more than this many bytes unread is dropped. */
export const SSE_MAX_BUFFER = 1024 * 1024;

const errorJson = (status: number, error: string) => Response.json({ error }, { status });

function tokenOf(ctx: RequestContext): string | null {
  const auth = ctx.header('authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const proto = ctx.header('sec-websocket-protocol');
  if (proto) {
    const first = proto.split(',')[0].trim();
    if (first) return first;
  }
  const q = ctx.query.access_token;
  return typeof q === 'string' && q ? q : null;
}

/** The user behind the request's token, or the 401 Response Mastodon's streaming server answers. */
async function authenticate(services: Services, ctx: RequestContext): Promise<Viewer | Response> {
  const token = tokenOf(ctx);
  return userOf(token, token ? await viewerForToken(services, token) : null);
}

function userOf(token: string | null, viewer: Viewer | null): Viewer | Response {
  if (!token) return errorJson(401, 'Missing access token');
  if (!viewer || !viewer.account || !viewer.user) return errorJson(401, 'Invalid access token');
  return viewer;
}

const tooMany = () => errorJson(429, 'Too many requests');

/** The close code of a socket whose subscription was refused for scope (1008: policy violation). */
const SCOPE_CLOSE = 1008;

function lastEventId(ctx: RequestContext): string | null {
  const q = ctx.query.last_event_id;
  if (typeof q === 'string' && /^\d{1,18}$/.test(q)) return q;
  const h = ctx.header('last-event-id');
  return h && /^\d{1,18}$/.test(h.trim()) ? h.trim() : null;
}

const str = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/** The WebSocket endpoint; `servicesOf` gives the instance's services once they are open (null before). */
export function streamingWebSocketRoute(servicesOf: () => Services | null): WebSocketRoute {
  return {
    pattern: '/api/v1/streaming',
    idleTimeoutSeconds: 60,
    async accept(ctx) {
      const services = servicesOf();
      const hub = services ? streamingHubOf(services) : null;
      if (!services || !hub) return errorJson(503, 'Streaming is not served by this process');
      // (read at once, as the router's guard does)
      const address = ctx.remoteAddress;
      const token = tokenOf(ctx);
      const found = token && !(await skipsTokenLookup(services, address, token)) ? await viewerForToken(services, token) : null;
      // Counted as the SSE request would be, before anything else is answered (throws the 429).
      await countRequest(services, address, found);
      const viewer = userOf(token, found);
      if (viewer instanceof Response) return viewer;
      const accountId = viewer.account!.id;
      const scopes = viewer.scopes;
      let first: ResolvedStream | StreamError | null = null;
      const name = str(ctx.query.stream);
      if (name !== undefined && name !== '') {
        try {
          first = await resolveStream(services, accountId, scopes, name, { tag: str(ctx.query.tag), list: str(ctx.query.list) });
        } catch (e) {
          if (!(e instanceof StreamError)) throw e;
          first = e;
        }
      }
      const resumeFrom = lastEventId(ctx);
      const release = hub.reserve(accountId);
      if (release === null) return tooMany();
      let client: StreamClient | null = null;
      let peerRef: WsPeer | null = null;
      const sendError = (peer: WsPeer, e: StreamError) => peer.send(JSON.stringify({ error: e.message, status: e.status }));
      // Messages are handled one at a time, in order (a subscribe may wait for the database).
      let chain: Promise<void> = Promise.resolve();
      return {
        open(peer) {
          peerRef = peer;
          client = hub.connect(accountId, {
            format: 'ws',
            write: (text) => peer.send(text),
            topics: { subscribe: (topic) => peer.subscribe(topic), unsubscribe: (topic) => peer.unsubscribe(topic) },
          });
          if (first instanceof StreamError) {
            sendError(peer, first);
            if (first instanceof StreamScopeError) return peer.close(SCOPE_CLOSE, first.message);
          } else if (first) hub.subscribe(client, first);
          // Begun at once, in the same turn as the subscription: live events from here on wait for the replay.
          if (resumeFrom) chain = hub.resume(client, resumeFrom).catch((err) => services.log.error({ err }, 'stream resume failed'));
        },
        message(peer, data) {
          const c = client;
          if (!c) return;
          chain = chain
            .then(() => onMessage(services, hub, c, peer, data, scopes, sendError))
            .catch((err) => {
              services.log.error({ err }, 'stream message failed');
              sendError(peer, new StreamError(500, 'Internal server error'));
            });
        },
        close() {
          release();
          if (client) hub.disconnect(client);
          client = null;
          void peerRef;
        },
        cancel() {
          release();
        },
      };
    },
  };
}

async function onMessage(
  services: Services,
  hub: StreamingHub,
  client: StreamClient,
  peer: WsPeer,
  data: Uint8Array,
  scopes: readonly string[],
  sendError: (peer: WsPeer, e: StreamError) => void,
): Promise<void> {
  let msg: unknown;
  try {
    msg = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return sendError(peer, new StreamError(400, 'Error parsing request'));
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return sendError(peer, new StreamError(400, 'Error parsing request'));
  const { type, stream, tag, list } = msg as Record<string, unknown>;
  if (type !== 'subscribe' && type !== 'unsubscribe') return sendError(peer, new StreamError(400, 'Unknown message type'));
  let resolved: ResolvedStream;
  try {
    resolved = await resolveStream(services, client.accountId, scopes, stream, { tag, list });
  } catch (e) {
    if (!(e instanceof StreamError)) throw e;
    sendError(peer, e);
    if (e instanceof StreamScopeError) peer.close(SCOPE_CLOSE, e.message);
    return;
  }
  if (type === 'subscribe') hub.subscribe(client, resolved);
  else hub.unsubscribe(client, resolved.key);
}

/** SSE path → stream name. */
const SSE_PATHS: Record<string, string> = {
  user: 'user',
  'user/notification': 'user:notification',
  public: 'public',
  'public/local': 'public:local',
  'public/remote': 'public:remote',
  hashtag: 'hashtag',
  'hashtag/local': 'hashtag:local',
  list: 'list',
  direct: 'direct',
};

async function sse(services: Services, ctx: RequestContext, name: string | null): Promise<Response> {
  const hub = streamingHubOf(services);
  if (!hub) return errorJson(503, 'Streaming is not served by this process');
  const viewer = await authenticate(services, ctx);
  if (viewer instanceof Response) return viewer;
  let streamName = name ?? str(ctx.query.stream);
  // Mastodon's ?only_media=true on the public streams.
  if (typeof streamName === 'string' && streamName.startsWith('public') && !streamName.endsWith(':media') && ['true', '1'].includes(String(str(ctx.query.only_media)))) {
    streamName = `${streamName}:media`;
  }
  let resolved: ResolvedStream;
  try {
    resolved = await resolveStream(services, viewer.account!.id, viewer.scopes, streamName, { tag: str(ctx.query.tag), list: str(ctx.query.list) });
  } catch (e) {
    if (e instanceof StreamError) return errorJson(e.status, e.message);
    throw e;
  }
  const resumeFrom = lastEventId(ctx);
  const release = hub.reserve(viewer.account!.id);
  if (release === null) return tooMany();
  const encoder = new TextEncoder();
  // uWS writes a chunk's closing CRLF only with the next write, and a line-reading client (Python's
  // requests, curl) hands a chunk on only once that CRLF came: an event alone in its write would
  // wait for the next heartbeat. So each event's chunk is followed at once by a tiny comment chunk
  // (ignored by every SSE parser), whose write completes the event's.
  const trailer = encoder.encode(':\n');
  let client: StreamClient | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  const end = () => {
    release();
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    if (client) hub.disconnect(client);
    client = null;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const write = (text: string): boolean => {
          if (client === null) return false;
          // A client that stopped reading: dropped, not buffered forever.
          if ((controller.desiredSize ?? 0) < -SSE_MAX_BUFFER) {
            end();
            controller.close();
            return false;
          }
          controller.enqueue(encoder.encode(text));
          controller.enqueue(trailer);
          return true;
        };
        client = hub.connect(viewer.account!.id, { format: 'sse', write });
        hub.subscribe(client, resolved);
        controller.enqueue(encoder.encode(':)\n'));
        controller.enqueue(trailer);
        heartbeat = setInterval(() => write(':thump\n'), SSE_HEARTBEAT_MS);
        heartbeat.unref?.();
        if (resumeFrom) void hub.resume(client, resumeFrom).catch((err) => services.log.error({ err }, 'stream resume failed'));
      },
      cancel() {
        end();
      },
    },
    { highWaterMark: 0 },
  );
  ctx.signal.addEventListener('abort', end, { once: true });
  if (ctx.signal.aborted) end();
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'private, no-store', 'x-accel-buffering': 'no' },
  });
}

/** The SSE endpoints and the health check. */
export function streamingRoutes(router: Router, services: Services): void {
  router.get('/api/v1/streaming/health', () => new Response('OK', { status: 200, headers: { 'content-type': 'text/plain' } }));
  router.get('/api/v1/streaming', (ctx) => sse(services, ctx, null));
  for (const [path, name] of Object.entries(SSE_PATHS)) router.get(`/api/v1/streaming/${path}`, (ctx) => sse(services, ctx, name));
  // Any other path under the streaming API: Mastodon's streaming server answers 400.
  router.get('/api/v1/streaming/*', () => errorJson(400, 'Unknown channel requested'));
}
