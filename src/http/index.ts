// src/http — Roost's HTTP layer on uWebSockets.js (the only code that imports uWS).
//
// Serving
//   startHttpServer({ host, port, router, log, fallback?, maxBodyBytes?, maxUploadBytes?,
//                     fallbackMaxBodyBytes?, bodyBudget?, uploadDir?, multipart?, publicUrl?,
//                     cors?, accessLog?, ws? }): Promise<HttpServer>
//     HttpServer = { port, inFlight, bodyBudget, close({ drainMs? }): Promise<void> }
//     - binds exclusively (no SO_REUSEPORT: a second server cannot share the port); a port that
//       cannot be bound throws ListenError { code: 'EADDRINUSE' | 'EACCES' | …, host, port }.
//     - unmatched paths → `fallback(request, ctx)` (Fedify's federation.fetch; give it an
//       onNotFound that returns the JSON 404) or JSON 404 {"error":"Not Found"} (Rails' answer
//       for an unknown route); known path, wrong method → 405 {"error":"Method Not Allowed"} + Allow.
//     - bodies: JSON (and any +json), urlencoded, multipart → ctx.body / ctx.files; malformed JSON
//       → 400; over the route's limit (RouteOptions.maxBodyBytes, else maxBodyBytes, 1 MiB) → 413
//       on Content-Length before reading, or as soon as a chunked body passes it; a body not in
//       within bodyTimeoutMs → 408; two Content-Length headers → 400. Router-wide and route hooks
//       (beforeBody) run first, with the upload paused: a bad token or a rate limit answers without
//       the body being read. A body no hook vouched for (ctx.markAuthenticated) reserves its size
//       from a process-wide budget (503 beyond) and one of its address's slots (429 beyond):
//       body-budget.ts. Multipart file parts go to temporary files in uploadDir as they arrive
//       (UploadedFile.path, bytes()), removed once the response is sent.
//     - fileResponse(path, size, init): a file streamed from disk with backpressure.
//     - CORS as Mastodon (/api/*, /oauth/token, /oauth/revoke, /.well-known/*, /nodeinfo/*,
//       /users/*, /@user), preflights answered; X-Request-Id on every response; one access log
//       line per request; HEAD served by GET routes; streamed Response bodies (SSE) supported.
//     - close() stops listening, drains in-flight requests up to drainMs, then closes the rest.
//   handleShutdownSignals(shutdown, { log, forceAfterMs? }) — SIGTERM/SIGINT → graceful shutdown.
//
// Routing
//   new Router().get/post/put/patch/delete/head/options(pattern, handler)
//               .update(pattern, handler)   // PUT + PATCH
//               .match(method, rawPath) → { handler, params, pattern } | { allowed } | null
//   patterns: '/api/v1/accounts/:id/follow', '/@:username', '/system/*' or '/system/*path'
//   Handler = (ctx: RequestContext) => Response | Promise<Response>
//
// RequestContext (lazy where it costs: request, headers, url, query, signal, log)
//   request (WHATWG Request with the buffered body), url, method, path, headers, header(name),
//   params, query, body, input ({...query, ...body}), files, reqId, log, signal (aborts when the
//   client goes away), remoteAddress, state, setResponseHeader(name, value) (on whatever answer
//   the request gets, errors included: the rate-limit headers).
//
// Route options: router.post(pattern, handler, { maxBodyBytes?, beforeBody? });
//   router.beforeBody(hook) runs a hook for every matched route before its body is read.
//
// Responses and errors
//   json(data, init?) — JSON Response on the fast path; stringResponse(body, init?) for other text.
//   throw httpError(status, message, extra?) / new HttpError(...) → {"error": message, ...extra}
//   throw validationError(message, details) → 422 {"error": "Validation failed: …", "details": {…}}
//   Anything else thrown → 500 {"error": "Internal Server Error"} (logged with the stack, never sent).
//
// Params (Rails-style nested keys, one shape for query, forms and JSON)
//   parseQuery, buildParams, normalizeJson; coercion for services: paramBool, paramInt,
//   paramString, paramArray, paramStrings.

export { startHttpServer, ListenError, type HttpServer, type HttpServerOptions } from './server.ts';
export { Router, isMethodNotAllowed, type Handler, type RouteMatch, type MethodNotAllowed, type RouteOptions, type BeforeBody } from './router.ts';
export type { RequestContext, UploadedFile } from './context.ts';
export { json, jsonText, stringResponse, StringResponse, JSON_CONTENT_TYPE, fileResponse, FileResponse } from './response.ts';
export { HttpError, httpError, validationError, isUnavailableError, unavailableError, type ErrorBody, type ValidationDetails } from './errors.ts';
export {
  parseQuery,
  buildParams,
  normalizeJson,
  paramBool,
  paramInt,
  paramString,
  paramArray,
  paramStrings,
  paramId,
  paramIds,
  requireId,
  type Params,
  type ParamValue,
  type IntOptions,
} from './params.ts';
export type { Files } from './body.ts';
export type { MultipartLimits } from './multipart.ts';
export { corsRuleFor, CORS_EXPOSE_HEADERS } from './cors.ts';
export { handleShutdownSignals, type ShutdownOptions } from './shutdown.ts';
export type { WebSocketRoute, WsSession, WsPeer } from './websocket.ts';
