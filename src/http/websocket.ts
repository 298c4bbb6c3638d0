// Extension point for WebSocket routes (the streaming API, /api/v1/streaming), served by uWS on the
// same port as HTTP. Not implemented yet: startHttpServer refuses a non-empty `ws` option.
//
// Plan (so src/streaming never imports uWS):
//   - startHttpServer registers `app.ws(route.pattern, behavior)` for each route BEFORE its
//     `app.any('/*')` catch-all.
//   - behavior.upgrade copies method/url/query/headers synchronously (same as HTTP), registers
//     onAborted, builds a RequestContext and awaits `route.accept(ctx)`; a Response rejects the
//     upgrade (written as a normal HTTP response, e.g. 401 JSON), otherwise the returned session
//     handlers become the socket's user data and `res.upgrade(...)` runs inside res.cork.
//   - open/message/close/drain call the session's handlers with a small `WsPeer` (send with
//     getBufferedAmount-based backpressure, close, remoteAddress); topics stay in src/streaming.

import type { RequestContext } from './context.ts';

export interface WsPeer {
  send(data: string | Uint8Array): boolean;
  close(code?: number, reason?: string): void;
  /** Bytes waiting to be written (backpressure). */
  readonly bufferedAmount: number;
}

export interface WsSession {
  open?(peer: WsPeer): void;
  message?(peer: WsPeer, data: Uint8Array, isBinary: boolean): void;
  drain?(peer: WsPeer): void;
  close?(peer: WsPeer, code: number): void;
}

export interface WebSocketRoute {
  /** Path pattern, e.g. '/api/v1/streaming'. */
  pattern: string;
  /** Authenticate/authorize the upgrade request; a Response refuses it. */
  accept(ctx: RequestContext): Promise<WsSession | Response> | WsSession | Response;
  maxPayloadLength?: number;
  idleTimeoutSeconds?: number;
}
