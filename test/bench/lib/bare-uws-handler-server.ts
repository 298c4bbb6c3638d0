// Reference server (a') of `npm run bench -- http`: bare uWebSockets.js calling the SAME handler
// as the full stack (createHandler) and writing its JSON string straight out — no router,
// context, CORS, request id or log. The ceiling for this handler on uWS; (c') vs (a') is what
// Roost's HTTP layer itself costs. Prints `LISTENING <port>`.

import { loadUws } from '../../../src/http/uws.ts';
import { StringResponse } from '../../../src/http/response.ts';
import type { RequestContext } from '../../../src/http/index.ts';
import { createHandler } from '../http-fullstack-server.ts';

const handler = await createHandler();
const uws = loadUws();
const port = Number(process.argv[2] ?? 0);
const ctx = {} as RequestContext;

uws
  .App()
  .get('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    void Promise.resolve(handler(ctx)).then((response) => {
      if (aborted) return;
      if (!(response instanceof StringResponse)) throw new Error('the bare reference expects a json() response');
      res.cork(() => res.writeHeader('content-type', 'application/json; charset=utf-8').end(StringResponse.peek(response)!));
    });
  })
  .listen('127.0.0.1', port, (s) => {
    if (!s) {
      console.error('listen failed');
      process.exit(1);
    }
    process.stdout.write(`LISTENING ${uws.us_socket_local_port(s)}\n`);
  });
process.on('SIGTERM', () => process.exit(0));
