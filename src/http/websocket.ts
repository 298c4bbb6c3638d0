// WebSocket routes (the streaming API, /api/v1/streaming), served by uWS on the same port as HTTP.
//
// How startHttpServer serves them (so src/streaming never imports uWS):
//   - `app.ws(route.pattern, behavior)` for each route, registered BEFORE the `app.any('/*')` catch-all.
//   - upgrade copies method/url/query/headers synchronously (same as HTTP), registers onAborted,
//     builds a RequestContext and awaits `route.accept(ctx)`; a Response refuses the upgrade (written
//     as a normal HTTP response, e.g. 401 JSON), otherwise the returned session becomes the socket's
//     user data and `res.upgrade(...)` runs inside res.cork (a client gone meanwhile: session.cancel). The first Sec-WebSocket-Protocol the
//     client offered is echoed back (Mastodon clients send the token there and expect it back).
//   - open/message/close/drain call the session's handlers with a small `WsPeer`.
//   - Backpressure: a socket whose unsent bytes pass `maxBackpressureBytes` is closed (uWS
//     closeOnBackpressureLimit, and WsPeer.send checks too): a slow client is dropped, never
//     buffered forever. Idle sockets are pinged automatically and closed after idleTimeoutSeconds.

import type { RequestContext } from './context.ts';

export interface WsPeer {
  /** Queues a text (string) or binary frame; false when the peer is gone or was dropped as too slow. */
  send(data: string | Uint8Array): boolean;
  close(code?: number, reason?: string): void;
  /** Bytes waiting to be written (backpressure). */
  readonly bufferedAmount: number;
  /** False once the socket closed. */
  readonly open: boolean;
  /** Native topics: HttpServer.publish(topic, …) sends to every socket subscribed to it, in C++. */
  subscribe(topic: string): void;
  /** Leaves a topic; what was published to it before (and is not written yet) still goes out. */
  unsubscribe(topic: string): void;
}

export interface WsSession {
  open?(peer: WsPeer): void;
  message?(peer: WsPeer, data: Uint8Array, isBinary: boolean): void;
  drain?(peer: WsPeer): void;
  close?(peer: WsPeer, code: number): void;
  /** The client went away between accept and the upgrade: the session never opens (release what accept took). */
  cancel?(): void;
}

export interface WebSocketRoute {
  /** Path pattern, e.g. '/api/v1/streaming'. */
  pattern: string;
  /** Authenticate/authorize the upgrade request; a Response refuses it. */
  accept(ctx: RequestContext): Promise<WsSession | Response> | WsSession | Response;
  /** Largest incoming message (default 16 KiB; larger ones close the socket). */
  maxPayloadLength?: number;
  /** Close a socket silent this long (pings are sent automatically before that); default 120 s. */
  idleTimeoutSeconds?: number;
  /** Unsent bytes beyond which a socket is dropped as too slow (default 1 MiB). */
  maxBackpressureBytes?: number;
}
