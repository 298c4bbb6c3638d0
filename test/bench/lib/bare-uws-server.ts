// Server (a) of `npm run bench -- http`: a bare uWebSockets.js hello world (the ceiling).
// uWS is loaded through src/http/uws.ts (only src/http loads uWS). Prints `LISTENING <port>`.

import { loadUws } from '../../../src/http/uws.ts';

const uws = loadUws();
const port = Number(process.argv[2] ?? 0);
uws
  .App()
  .get('/*', (res) => {
    res.end('Hello World!');
  })
  .listen('127.0.0.1', port, (s) => {
    if (!s) {
      console.error('listen failed');
      process.exit(1);
    }
    process.stdout.write(`LISTENING ${uws.us_socket_local_port(s)}\n`);
  });
process.on('SIGTERM', () => process.exit(0));
