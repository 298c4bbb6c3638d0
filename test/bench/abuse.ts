/**
 * Abuse: what hostile clients cost a running Roost (`roost start` in its own process, embedded
 * database, default limits), each figure next to the idle baseline of the same run:
 *
 *   - peak RSS while 10 clients trickle 90 MB multipart uploads (chunked, 64 KiB every 20 ms) at
 *     an unauthenticated route (POST /api/v1/apps), and how much each got to send;
 *   - peak RSS while 60 clients request a 16 MB file under /system/ and then stop reading;
 *   - peak RSS while 600 clients, each from its own loopback address (127.2.x.y: the per-address
 *     cap does not help), announce 1 MiB and trickle it (8 KiB every 100 ms for 12 s), at POST
 *     /inbox and then at POST /api/v1/apps, with how many were held, refused 503 (the budget of
 *     unauthenticated bodies) or 429 (per address);
 *   - peak RSS while 10 clients with a user's valid token trickle 32 MiB chunked multipart uploads
 *     (64 KiB every 20 ms) at POST /api/v1/media;
 *   - peak RSS while one valid token asks for 1,000 WebSocket upgrades of the streaming API and
 *     holds what it got, and how many were accepted (the per-account cap: 20);
 *   - 200,000 requests with a random bearer string each from one client address (forwarded by the
 *     loopback proxy, so not exempt as loopback is): how many got past the limit, next to the limit;
 *   - password guesses accepted (not 429) in one minute from one IP through the password grant,
 *     next to the same minute's guesses on a server started with rate limits off.
 *
 * Clients on loopback are exempt from the rate limits (as in Mastodon): the rate-limited figures
 * come from a client named in X-Forwarded-For, which the server trusts from loopback.
 *
 *   npm run bench -- abuse [guess-seconds=60]
 *   BENCH_WS_UPGRADES (1000), BENCH_RANDOM_TOKENS (200000)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { table, fmtInt } from './lib/report.ts';

const root = path.resolve(import.meta.dirname, '../..');
/** The client the rate-limited figures come from (forwarded by the trusted loopback proxy). */
const CLIENT = { 'x-forwarded-for': '203.0.113.77' };
/** The password guesser: another address (the random-token client's general budget is spent). */
const GUESSER = { 'x-forwarded-for': '203.0.113.78' };
const cli = path.join(root, 'src/cli.ts');
const MB = 1024 * 1024;

interface Server {
  port: number;
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
}

async function startServer(env: Record<string, string>, prepare?: (dataDir: string) => void): Promise<Server> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-abuse-'));
  prepare?.(dataDir);
  const child: ChildProcess = spawn(process.execPath, [cli, 'start'], {
    cwd: root,
    env: { ...process.env, ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`roost exited ${code}: ${out.slice(-2000)}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    port,
    pid: child.pid!,
    dataDir,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Peak RSS of `pid` while `run` runs (sampled every 50 ms). */
async function peakRss<T>(pid: number, run: () => Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 50);
  try {
    const result = await run();
    peak = Math.max(peak, rssOf(pid));
    return { peak, result };
  } finally {
    clearInterval(timer);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One client trickling a chunked multipart body of `total` bytes; resolves with the bytes it got to send. */
function trickleUpload(port: number, total: number, ms: number): Promise<{ sent: number; status: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let sent = 0;
    let status = 'none';
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearInterval(timer);
      clearTimeout(stopAt);
      socket.destroy();
      resolve({ sent, status });
    };
    const stopAt = setTimeout(finish, ms);
    const piece = Buffer.alloc(64 * 1024, 0x61);
    socket.on('connect', () => {
      socket.write('POST /api/v1/apps HTTP/1.1\r\nHost: bench\r\nContent-Type: multipart/form-data; boundary=xyz\r\nTransfer-Encoding: chunked\r\n\r\n');
      const head = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n';
      socket.write(`${Buffer.byteLength(head).toString(16)}\r\n${head}\r\n`);
      timer = setInterval(() => {
        if (socket.destroyed || sent >= total) return;
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
        sent += piece.length;
      }, 20);
    });
    socket.on('data', (d) => {
      if (status === 'none') status = d.toString('latin1').split('\r\n')[0] ?? '';
    });
    socket.on('error', () => {});
    socket.on('close', finish);
  });
}

/** One client asking for the file and then not reading; resolves after `ms` with the status line seen. */
function stalledReader(port: number, file: string, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${file} HTTP/1.1\r\nHost: bench\r\n\r\n`));
    let status = '';
    socket.once('data', (d) => {
      status = d.toString('latin1').split('\r\n')[0] ?? '';
      socket.pause(); // stop reading: the kernel buffers fill, then the server sees backpressure
    });
    socket.on('error', () => {});
    setTimeout(() => {
      socket.destroy();
      resolve(status);
    }, ms);
  });
}

/**
 * One client from `from` announcing `length` bytes to `target` and sending `piece` bytes every
 * `every` ms for `ms`; resolves with the status line it got ('held' when none).
 */
function trickleBody(port: number, from: string, head: string, piece: number, every: number, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let status = 'held';
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearInterval(timer);
      clearTimeout(stopAt);
      socket.destroy();
      resolve(status);
    };
    const stopAt = setTimeout(finish, ms);
    const bytes = Buffer.alloc(piece, 0x20);
    socket.on('connect', () => {
      socket.write(head);
      socket.write('{');
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(bytes);
      }, every);
    });
    socket.on('data', (d) => {
      if (status === 'held') status = d.toString('latin1').split('\r\n')[0] ?? '';
    });
    socket.on('error', () => {});
    socket.on('close', finish);
  });
}

/** 600 trickling clients at one route, one loopback address each. */
function trickleMany(port: number, head: string): Promise<string[]> {
  return Promise.all(
    Array.from({ length: 600 }, (_, i) => trickleBody(port, `127.2.${Math.floor(i / 250)}.${(i % 250) + 2}`, head, 8 * 1024, 100, 12_000)),
  );
}

function statusCounts(statuses: string[]): string {
  const counts = new Map<string, number>();
  for (const s of statuses) {
    const key = s === 'held' ? 'held' : (s.split(' ')[1] ?? s);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort().map(([k, n]) => `${n} ${k}`).join(', ');
}

/** One client with a token trickling a chunked multipart upload of `total` bytes to /api/v1/media; resolves with the status line. */
function trickleMedia(port: number, token: string, total: number, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let sent = 0;
    let status = 'none';
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearInterval(timer);
      clearTimeout(stopAt);
      socket.destroy();
      resolve(status);
    };
    const stopAt = setTimeout(finish, ms);
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const chunk = (b: Buffer | string) => {
      const buf = Buffer.isBuffer(b) ? b : Buffer.from(b);
      socket.write(`${buf.length.toString(16)}\r\n`);
      socket.write(buf);
      socket.write('\r\n');
    };
    socket.on('connect', () => {
      socket.write(`POST /api/v1/media HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=xyz\r\nTransfer-Encoding: chunked\r\n\r\n`);
      chunk('--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n');
      timer = setInterval(() => {
        if (socket.destroyed) return;
        if (sent >= total) {
          clearInterval(timer);
          chunk('\r\n--xyz--\r\n');
          socket.write('0\r\n\r\n');
          return;
        }
        chunk(piece);
        sent += piece.length;
      }, 20);
    });
    socket.on('data', (d) => {
      if (status === 'none') status = d.toString('latin1').split('\r\n')[0] ?? '';
    });
    socket.on('error', () => {});
    socket.on('close', finish);
  });
}

/** A user made through the operator's command (the control socket), and a token with write:media through the password grant. */
async function userToken(server: Server): Promise<string> {
  const out = execFileSync(process.execPath, [cli, 'accounts', 'create', 'bencher', '--email', 'bencher@example.com', '--confirmed'], {
    cwd: root,
    env: { ...process.env, ROOST_DATA_DIR: server.dataDir, ROOST_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  const password = /New password: (\S+)/.exec(out)?.[1];
  if (!password) throw new Error(`no password in: ${out}`);
  const app = await fetch(`http://127.0.0.1:${server.port}/api/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'bench', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' }),
  }).then((r) => r.json() as Promise<{ client_id: string; client_secret: string }>);
  const res = await fetch(`http://127.0.0.1:${server.port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'bencher@example.com', password, scope: 'read write' }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function createApp(port: number): Promise<{ client_id: string; client_secret: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'bench', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' }),
  });
  return (await res.json()) as { client_id: string; client_secret: string };
}

/** Password guesses for one e-mail from this IP for `seconds`: accepted (answered, not 429) and refused. */
async function guessPasswords(port: number, seconds: number): Promise<{ accepted: number; refused: number }> {
  const app = await createApp(port);
  let accepted = 0;
  let refused = 0;
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...GUESSER },
      body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'victim@example.com', password: `guess-${n++}`, scope: 'read' }),
    });
    await res.arrayBuffer();
    if (res.status === 429) refused++;
    else accepted++;
  }
  return { accepted, refused };
}

/** A signed-up user's token (the sign-up API, as a client does it). */
async function signUp(port: number): Promise<string> {
  const base = `http://127.0.0.1:${port}`;
  const app = (await (
    await fetch(`${base}/api/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'bench', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' }),
    })
  ).json()) as { client_id: string; client_secret: string };
  const grant = (await (
    await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read write' }),
    })
  ).json()) as { access_token: string };
  const res = await fetch(`${base}/api/v1/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${grant.access_token}` },
    body: JSON.stringify({ username: 'benchuser', email: 'bench@example.test', password: 'a long bench password', agreement: true, locale: 'en' }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`sign-up failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** One WebSocket upgrade of the streaming API: its status, and its socket when accepted (101). */
function wsUpgrade(port: number, token: string): Promise<{ status: number; socket: Duplex | null }> {
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/streaming?stream=user',
      agent: false,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), authorization: `Bearer ${token}` },
    });
    req.on('upgrade', (res, socket) => {
      socket.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, socket });
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        res.socket?.destroy();
        resolve({ status: res.statusCode ?? 0, socket: null });
      });
    });
    req.on('error', () => resolve({ status: 0, socket: null }));
    req.end();
  });
}

/** `n` requests with a random bearer string each from CLIENT, `concurrency` at a time: answers by status. */
async function randomTokens(port: number, n: number, concurrency: number): Promise<{ byStatus: Map<number, number>; seconds: number }> {
  const byStatus = new Map<number, number>();
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/instance`, { headers: { ...CLIENT, authorization: `Bearer ${randomBytes(24).toString('base64url')}` } });
      await res.arrayBuffer();
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
      if (++done % 10_000 === 0) process.stderr.write(`abuse: ${fmtInt(done)} random-token requests, ${fmtInt(done / ((performance.now() - t0) / 1000))}/s\n`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { byStatus, seconds: (performance.now() - t0) / 1000 };
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
const plus = (bytes: number) => `${bytes >= 0 ? '+' : ''}${(bytes / MB).toFixed(0)} MB`;

export async function main(args: string[]): Promise<number> {
  const guessSeconds = Number(args[0] ?? 60);
  const mediaRel = 'accounts/headers/1/0123456789abcdef01234567.png';
  const server = await startServer({}, (dataDir) => {
    const file = path.join(dataDir, 'media', mediaRel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Buffer.alloc(16 * MB, 7));
  });
  const rows: string[][] = [];
  let guesses: { accepted: number; refused: number };
  let random: { byStatus: Map<number, number>; seconds: number; tokens: number; perIp: number };
  try {
    // Warm up: the instance document, a small file request, then let the heap settle.
    for (let i = 0; i < 20; i++) await (await fetch(`http://127.0.0.1:${server.port}/api/v1/instance`)).arrayBuffer();
    await (await fetch(`http://127.0.0.1:${server.port}/system/${mediaRel}`)).arrayBuffer();
    await sleep(2000);
    const idle = rssOf(server.pid);
    rows.push(['idle (after warm-up)', mb(idle), '', '']);

    const trickle = await peakRss(server.pid, () => Promise.all(Array.from({ length: 10 }, () => trickleUpload(server.port, 90 * MB, 8000))));
    const sent = trickle.result.map((r) => r.sent);
    rows.push([
      '10 clients trickle 90 MB uploads (unauthenticated route)',
      mb(trickle.peak),
      plus(trickle.peak - idle),
      `each cut off after ${(Math.max(...sent) / MB).toFixed(1)} MB: ${[...new Set(trickle.result.map((r) => r.status))].join(', ')}`,
    ]);
    await sleep(2000);

    const idle2 = rssOf(server.pid);
    const stall = await peakRss(server.pid, async () => {
      const readers = Array.from({ length: 60 }, () => stalledReader(server.port, `/system/${mediaRel}`, 6000));
      return Promise.all(readers);
    });
    rows.push([
      '60 clients stall on a 16 MB media file',
      mb(stall.peak),
      plus(stall.peak - idle2),
      `${stall.result.filter((s) => s.startsWith('HTTP/1.1 200')).length}/60 got 200 (idle before: ${mb(idle2)})`,
    ]);

    await sleep(2000);
    const idle3 = rssOf(server.pid);
    const signed = 'Signature: keyId="https://peer.example/actor#main-key",signature="x"\r\n';
    const inbox = await peakRss(server.pid, () =>
      trickleMany(server.port, `POST /inbox HTTP/1.1\r\nHost: bench\r\nContent-Type: application/activity+json\r\n${signed}Content-Length: ${MB}\r\n\r\n`),
    );
    rows.push(['600 clients trickle 1 MiB bodies at /inbox', mb(inbox.peak), plus(inbox.peak - idle3), `${statusCounts(inbox.result)} (idle before: ${mb(idle3)})`]);
    await sleep(2000);

    const idle4 = rssOf(server.pid);
    const apps = await peakRss(server.pid, () =>
      trickleMany(server.port, `POST /api/v1/apps HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${MB}\r\n\r\n`),
    );
    rows.push(['600 clients trickle 1 MiB bodies at /api/v1/apps', mb(apps.peak), plus(apps.peak - idle4), `${statusCounts(apps.result)} (idle before: ${mb(idle4)})`]);
    await sleep(2000);

    const token = await userToken(server);
    await sleep(2000);
    const idle5 = rssOf(server.pid);
    const uploads = await peakRss(server.pid, () => Promise.all(Array.from({ length: 10 }, () => trickleMedia(server.port, token, 32 * MB, 30_000))));
    rows.push([
      '10 clients with a token trickle 32 MiB uploads at /api/v1/media',
      mb(uploads.peak),
      plus(uploads.peak - idle5),
      `${[...new Set(uploads.result)].join(', ')} (idle before: ${mb(idle5)})`,
    ]);

    // 1,000 WebSocket upgrades on one valid token, 50 at a time, all held for 3 s.
    const wsToken = await signUp(server.port);
    await sleep(2000);
    const idle6 = rssOf(server.pid);
    const upgrades = Number(process.env.BENCH_WS_UPGRADES ?? 1000);
    const held: Duplex[] = [];
    const ws = await peakRss(server.pid, async () => {
      const statuses: number[] = [];
      for (let i = 0; i < upgrades; i += 50) {
        const batch = await Promise.all(Array.from({ length: Math.min(50, upgrades - i) }, () => wsUpgrade(server.port, wsToken)));
        for (const u of batch) {
          statuses.push(u.status);
          if (u.socket) held.push(u.socket);
        }
      }
      await sleep(3000);
      return statuses;
    });
    for (const s of held) s.destroy();
    const accepted = ws.result.filter((s) => s === 101).length;
    const refused = ws.result.filter((s) => s === 429).length;
    rows.push([
      `${fmtInt(upgrades)} WebSocket upgrades on one token, held 3 s`,
      mb(ws.peak),
      plus(ws.peak - idle6),
      `${accepted} accepted, ${refused} refused (429) (idle before: ${mb(idle6)})`,
    ]);
    await sleep(1000);

    // Random bearer strings from one (non-loopback) client address.
    const tokens = Number(process.env.BENCH_RANDOM_TOKENS ?? 200_000);
    const perIp = Number(/^(\d+)/.exec(process.env.ROOST_RATE_LIMIT_PER_IP ?? '300')![1]);
    random = { ...(await randomTokens(server.port, tokens, 32)), tokens, perIp };

    guesses = await guessPasswords(server.port, guessSeconds);
  } finally {
    await server.stop();
  }

  const open = await startServer({ ROOST_RATE_LIMITS: '0' });
  let unlimited: { accepted: number; refused: number };
  const openSeconds = Math.min(guessSeconds, 15);
  try {
    unlimited = await guessPasswords(open.port, openSeconds);
  } finally {
    await open.stop();
  }

  console.log(table(['roost start, embedded database', 'peak RSS', 'vs idle', 'note'], rows));
  console.log();
  const past = [...random!.byStatus].filter(([s]) => s !== 429).reduce((a, [, n]) => a + n, 0);
  console.log(
    table(
      ['random bearer strings, one client address', 'requests', 'got past (not 429)', 'the limit', 'answers', 'req/s'],
      [
        [
          'GET /api/v1/instance',
          fmtInt(random!.tokens),
          fmtInt(past),
          `${fmtInt(random!.perIp)} per 5 min`,
          [...random!.byStatus].map(([s, n]) => `${s}: ${fmtInt(n)}`).join(', '),
          fmtInt(random!.tokens / random!.seconds),
        ],
      ],
    ),
  );
  console.log();
  const perMinute = (g: { accepted: number }, s: number) => (g.accepted * 60) / s;
  console.log(
    table(
      ['password grant, one IP', 'accepted/min', 'refused (429)', 'ratio'],
      [
        [`rate limits on (${guessSeconds} s)`, fmtInt(perMinute(guesses!, guessSeconds)), fmtInt(guesses!.refused), `${(perMinute(guesses!, guessSeconds) / perMinute(unlimited!, openSeconds)).toFixed(3)}x`],
        [`rate limits off (${openSeconds} s)`, fmtInt(perMinute(unlimited!, openSeconds)), fmtInt(unlimited!.refused), '1.000x'],
      ],
    ),
  );
  return 0;
}
