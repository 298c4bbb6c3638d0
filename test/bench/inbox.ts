/**
 * `npm run bench -- inbox`: how fast a real Roost takes signed deliveries, and what a flood of
 * account Deletes costs it.
 *
 * Roost runs in this process (startRoost: the real uWS server on loopback, a scratch PostgreSQL
 * database beside ROOST_BENCH_DATABASE_URL, dropped at the end; default
 * postgres://postgres@127.0.0.1:5432/postgres). A few fake remote servers (node:http on loopback,
 * also in this process) serve their actors' documents and RSA-2048 keys; Roost fetches each
 * actor and key once, on its first delivery (warm-up), and has them cached after.
 *
 *   (a) accepted/s   BENCH_INBOX_CREATES (default 2000) signed `Create(Note)` deliveries
 *                    (draft-cavage, signed beforehand, addressed to a local account), POSTed to
 *                    the shared inbox by a worker thread (keep-alive, 32 at a time); the 202s
 *                    per second of wall time, then how many Notes are stored by 30 s after the last 202 (the inbox jobs run meanwhile)
 *   (b) verify/s     the same signatures verified in-process with node:crypto (the signing
 *                    string rebuilt from the request, the body's SHA-256 digest checked, RSA
 *                    verify with the key already parsed), on one thread: Roost's JavaScript runs
 *                    on one thread too. Goal: (a) ≥ 0.5 × (b)
 *   (d) floor       the same load, by the same sender, to bare uWebSockets.js in this process
 *                    answering 202 with nothing else, then with (b)'s verification and nothing
 *                    stored (on its thread, then on two worker threads fed one batch per
 *                    event-loop turn), and on its thread with the verified requests stored in
 *                    batches before their 202s (batched as Roost's queue batches its enqueues:
 *                    group commit), by one multi-row insert or by one append to a local file and
 *                    one fdatasync: what any server that verifies, and then one that also keeps
 *                    what it accepts, can reach on this machine
 *   (c) Deletes      1,500 account Deletes (`Delete` of the actor itself) from one origin paced
 *                    over BENCH_INBOX_DELETE_SECONDS (default 60): the origin's known actors
 *                    delete themselves, then again (gone by then), the rest are actors Roost
 *                    never saw. Printed: answers by status, requests reaching the origin during
 *                    the phase (goal 0 for unknown or gone actors), this process's heap after a
 *                    GC before and after (and the peak sampled meanwhile): goal ≤ 1.2× steady.
 *
 * Timing is printed, never asserted.
 */
import { randomBytes, createHash, createPublicKey, verify as rsaVerify, type KeyObject, type webcrypto } from 'node:crypto';
type CryptoKey = webcrypto.CryptoKey;
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { signRequest } from '@fedify/fedify';
import { BENCH_RSA_BITS, rsaKeyPair } from './lib/keys.ts';
import { exportSpki } from '@fedify/vocab-runtime';
import { fmtInt, fmtRatio, table } from './lib/report.ts';
import { perTurn } from '../../src/lib/per-turn.ts';

interface RawRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

// ---------------------------------------------------------------------------------------------
// The load generator (a worker thread, so that sending costs Roost's thread nothing). Plain
// keep-alive sockets writing each request's bytes, prepared beforehand, and reading the answer's
// status line and Content-Length (uWS always sends one): node:http's client cost ~150 µs of CPU per
// request here, more than Roost's side, and on two cores that starved the server it measured.

async function loadWorker(): Promise<void> {
  const { port, requests, concurrency } = workerData as { port: number; requests: RawRequest[]; concurrency: number };
  const wire = requests.map((r) => {
    const head = `POST ${r.path} HTTP/1.1\r\n${Object.entries(r.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}content-length: ${Buffer.byteLength(r.body)}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(r.body)]);
  });
  const statuses: Record<string, number> = {};
  const count = (k: string | number) => (statuses[k] = (statuses[k] ?? 0) + 1);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from(
      { length: Math.min(concurrency, wire.length) },
      () =>
        new Promise<void>((resolve) => {
          const socket = net.connect(port, '127.0.0.1');
          socket.setNoDelay(true);
          let buf: Buffer = Buffer.alloc(0);
          const send = () => {
            if (next >= wire.length) return void (socket.end(), resolve());
            socket.write(wire[next++]!);
          };
          socket.on('connect', send);
          socket.on('data', (chunk: Buffer) => {
            buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
            for (;;) {
              const end = buf.indexOf('\r\n\r\n');
              if (end < 0) return;
              const head = buf.toString('latin1', 0, end);
              const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
              if (buf.length < end + 4 + length) return;
              count(Number(head.slice(9, 12)));
              buf = buf.subarray(end + 4 + length);
              send();
            }
          });
          socket.on('error', () => {
            count('error');
            resolve();
          });
        }),
    ),
  );
  parentPort!.postMessage({ ms: performance.now() - t0, statuses });
}

// ---------------------------------------------------------------------------------------------
// Fake remote servers.

const AS_CONTEXT = ['https://www.w3.org/ns/activitystreams', 'https://w3id.org/security/v1'];
const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

interface Actor {
  id: string;
  keyId: string;
  privateKey: CryptoKey;
  publicKey: KeyObject;
  pem: string;
}

interface Origin {
  base: string;
  actors: Actor[];
  /** "METHOD path" of every request received, with its arrival time (performance.now()). */
  hits: { what: string; at: number }[];
  close(): Promise<void>;
}

async function startOrigin(actorCount: number, name: string): Promise<Origin> {
  const origin = { actors: [] as Actor[], hits: [] as { what: string; at: number }[] } as Origin;
  const byPath = new Map<string, Actor>();
  const server = http.createServer((req, res) => {
    origin.hits.push({ what: `${req.method} ${req.url}`, at: performance.now() });
    const actor = byPath.get((req.url ?? '').split('#')[0]!);
    if (!actor) return void res.writeHead(410).end();
    res.writeHead(200, { 'content-type': 'application/activity+json' });
    res.end(
      JSON.stringify({
        '@context': AS_CONTEXT,
        id: actor.id,
        type: 'Person',
        preferredUsername: actor.id.split('/').pop(),
        inbox: `${actor.id}/inbox`,
        outbox: `${actor.id}/outbox`,
        followers: `${actor.id}/followers`,
        following: `${actor.id}/following`,
        endpoints: { sharedInbox: `${origin.base}/inbox` },
        publicKey: { id: actor.keyId, owner: actor.id, publicKeyPem: actor.pem },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (let i = 0; i < actorCount; i++) {
    const keys = await rsaKeyPair();
    const pem = await exportSpki(keys.publicKey);
    const id = `${origin.base}/users/${name}u${i}`;
    const actor = { id, keyId: `${id}#main-key`, privateKey: keys.privateKey, publicKey: createPublicKey(pem), pem };
    origin.actors.push(actor);
    byPath.set(new URL(id).pathname, actor);
  }
  origin.close = () => new Promise<void>((r) => server.close(() => r()));
  return origin;
}

async function signed(url: string, body: unknown, key: CryptoKey, keyId: string): Promise<RawRequest> {
  const text = JSON.stringify(body);
  const request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: text });
  const s = await signRequest(request, key, new URL(keyId), { spec: 'draft-cavage-http-signatures-12' });
  const headers: Record<string, string> = {};
  s.headers.forEach((v, k) => (headers[k] = v));
  headers.host = new URL(url).host;
  return { path: new URL(url).pathname, headers, body: text };
}

function createNote(actor: Actor, n: number, reader: string) {
  const id = `${actor.id}/statuses/${n}`;
  const note = {
    id,
    type: 'Note',
    attributedTo: actor.id,
    to: [PUBLIC, reader],
    cc: [`${actor.id}/followers`],
    content: `<p>Post ${n} for the inbox bench, addressed to a local account.</p>`,
    published: new Date().toISOString(),
  };
  return { '@context': AS_CONTEXT, id: `${id}/activity`, type: 'Create', actor: actor.id, to: note.to, cc: note.cc, object: note };
}

/** What Roost does with a draft-cavage signature, in plain node:crypto: digest, signing string, RSA verify. */
function verifyCavage(r: RawRequest, keys: Map<string, KeyObject>): boolean {
  const sig = r.headers.signature!;
  const params = Object.fromEntries([...sig.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  const key = keys.get(params.keyId!);
  if (!key) return false;
  const digest = `SHA-256=${createHash('sha256').update(r.body).digest('base64')}`;
  if (r.headers.digest !== digest) return false;
  const lines = params.headers!.split(' ').map((h) => (h === '(request-target)' ? `(request-target): post ${r.path}` : `${h}: ${r.headers[h]}`));
  return rsaVerify('sha256', Buffer.from(lines.join('\n')), key, Buffer.from(params.signature!, 'base64'));
}

// ---------------------------------------------------------------------------------------------
/** A verifying thread of the pooled floor: batches of requests in, one boolean per request out. */
function verifyWorker(): void {
  const keys = new Map(Object.entries((workerData as { keys: Record<string, string> }).keys).map(([id, pem]) => [id, createPublicKey(pem)]));
  parentPort!.on('message', (batch: RawRequest[]) => parentPort!.postMessage(batch.map((r) => verifyCavage(r, keys))));
}

/**
 * Verification off the server's thread, done well: each event-loop turn's requests go as one
 * message to one of `threads` verifying threads (in turn), their answers come back as one.
 */
function verifyPool(threads: number, keys: Map<string, KeyObject>) {
  const pems = Object.fromEntries([...keys].map(([id, k]) => [id, k.export({ type: 'spki', format: 'pem' }) as string]));
  const workers = Array.from({ length: threads }, () => new Worker(new URL(import.meta.url), { workerData: { kind: 'verify', keys: pems } }));
  const waiting = workers.map(() => [] as ((ok: boolean[]) => void)[]);
  workers.forEach((w, i) => w.on('message', (ok: boolean[]) => waiting[i]!.shift()!(ok)));
  let turn = 0;
  const verify = perTurn<RawRequest, boolean>(async (batch) => {
    const i = turn++ % workers.length;
    const ok = await new Promise<boolean[]>((resolve) => {
      waiting[i]!.push(resolve);
      workers[i]!.postMessage(batch.map((c) => c.item));
    });
    batch.forEach((c, j) => c.resolve(ok[j]!));
  });
  return {
    verify: (r: RawRequest, done: (ok: boolean) => void) => void verify(r).then(done),
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

/**
 * The least a durable intake adds: verified requests written in batches, answered once their batch
 * is durable. Batches are formed as Roost's own queue forms them (src/lib/per-turn.ts with one
 * batch in flight, as src/jobs/fedify-mq.ts enqueues): each event-loop turn's requests, or all that
 * came while the previous batch was being written (group commit).
 */
function durableStore(write: (bodies: string[]) => Promise<void>, close: () => Promise<unknown>) {
  const store = perTurn<string, boolean>(async (batch) => {
    await write(batch.map((c) => c.item));
    for (const c of batch) c.resolve(true);
  }, { maxInFlight: 1 });
  return {
    store: (body: string, done: (ok: boolean) => void) => void store(body).then(done, () => done(false)),
    close,
  };
}

/** One multi-row insert (one commit) per batch. */
async function groupCommitStore(connectionString: string) {
  const pool = new pg.Pool({ connectionString, max: 1 });
  await pool.query(`create table if not exists bench_floor_inbox (id bigserial primary key, body text not null)`);
  return durableStore(async (bodies) => void (await pool.query(`insert into bench_floor_inbox (body) select unnest($1::text[])`, [bodies])), () => pool.end());
}

/** Without a database: one append to a local file and one fdatasync per batch. */
async function appendLogStore(file: string) {
  const fh = await open(file, 'a');
  return durableStore(async (bodies) => {
    await fh.write(bodies.map((b) => `${b}\n`).join(''));
    await fh.datasync();
  }, () => fh.close());
}

/**
 * The floor any server on this machine stands on: bare uWebSockets.js in this process, on this
 * thread, reading each POST's headers and body and answering 202 Accepted, with the same
 * verification as (b) or none, then storing it or not, and nothing else (no other checks, no
 * processing). Fed by the same sender as Roost.
 */
type FloorVerify = { verify(r: RawRequest, done: (ok: boolean) => void): void } | null;
type FloorStore = { store(body: string, done: (ok: boolean) => void): void };

async function startFloor(verify: FloorVerify, store?: FloorStore): Promise<{ port: number; close(): void }> {
  const { loadUws } = await import('../../src/http/uws.ts');
  const uws = loadUws();
  const app = uws.App();
  app.post('/*', (res, req) => {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    const path = req.getUrl();
    const chunks: Buffer[] = [];
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const answer = (ok: boolean) => {
      if (!aborted) res.cork(() => res.writeStatus(ok ? '202 Accepted' : '401 Unauthorized').end());
    };
    res.onData((chunk, last) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!last) return;
      const r = { path, headers, body: Buffer.concat(chunks).toString('utf8') };
      if (verify === null) answer(true);
      else verify.verify(r, (ok) => (ok && store ? store.store(r.body, answer) : answer(ok)));
    });
  });
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (listenSocket) => (listenSocket ? resolve(uws.us_socket_local_port(listenSocket)) : reject(new Error('floor: cannot listen')))),
  );
  return { port, close: () => app.close() };
}

// ---------------------------------------------------------------------------------------------

export async function main(): Promise<number> {
  const creates = Number(process.env.BENCH_INBOX_CREATES ?? 2000);
  const deleteSeconds = Number(process.env.BENCH_INBOX_DELETE_SECONDS ?? 60);
  const DELETES = 1500;
  const ORIGINS = 4;
  const ACTORS = 5;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  const { loadConfig } = await import('../../config/index.ts');
  const { startRoost } = await import('../../src/main.ts');
  const { createLocalAccount } = await import('../../src/services/accounts.ts');
  const { GENEROUS_RATE_LIMITS } = await import('../helpers/roost.ts');
  const { inboxFastPath } = await import('../../src/federation/index.ts');

  const base = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_inbox_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-inbox-'));
  const origins = await Promise.all(Array.from({ length: ORIGINS }, (_, i) => startOrigin(ACTORS, `o${i}`)));
  const config = loadConfig({
    env: {},
    overrides: {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: url.toString(),
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'error',
      rateLimits: GENEROUS_RATE_LIMITS,
      federation: { allowPrivateAddresses: true },
    },
  });
  const roost = await startRoost(config, { domainFromPort: true, controlSocket: false });
  const sql = roost.services.db.sql;
  try {
    await createLocalAccount(roost.services, { username: 'reader', email: 'reader@bench.test', confirmed: true });
    const reader = `${roost.config.publicUrl}/users/reader`;
    const inbox = `${roost.config.publicUrl}/inbox`;
    const actors = origins.flatMap((o) => o.actors);
    const keys = new Map(actors.map((a) => [a.keyId, a.publicKey]));
    const remoteStatuses = async () =>
      (await sql.query<{ n: number }>(`select count(*)::int as n from statuses s join accounts a on a.id = s.account_id where a.domain is not null`))[0]!.n;

    // Signed beforehand: signing is the senders' cost, not Roost's.
    const warm = await Promise.all(actors.map((a) => signed(inbox, createNote(a, 0, reader), a.privateKey, a.keyId)));
    const load: RawRequest[] = [];
    for (let i = 1; i <= creates; i++) {
      const a = actors[i % actors.length]!;
      load.push(await signed(inbox, createNote(a, i, reader), a.privateKey, a.keyId));
    }

    // (b) the verification rate, same signatures, one thread.
    for (let i = 0; i < 200; i++) verifyCavage(load[i % load.length]!, keys);
    let verified = 0;
    const tv = performance.now();
    for (const r of load) if (verifyCavage(r, keys)) verified++;
    const verifyMs = performance.now() - tv;
    if (verified !== load.length) throw new Error(`only ${verified} of ${load.length} signatures verified in-process`);
    const verifyRate = (load.length / verifyMs) * 1000;

    // Warm-up: every actor's first delivery (Roost fetches the actor and its key, once).
    const send = (requests: RawRequest[], concurrency: number, port = roost.port) =>
      new Promise<{ ms: number; statuses: Record<string, number> }>((resolve, reject) => {
        const w = new Worker(new URL(import.meta.url), { workerData: { port, requests, concurrency } });
        w.once('message', resolve);
        w.once('error', reject);
      });
    // (d) the floors: the same load to bare uWebSockets.js, while Roost is idle (before its warm-up:
    // the Note processing after (a) would share this thread).
    type Floor = { verify: FloorVerify; store?: FloorStore; close?: () => Promise<unknown> };
    const onThread: FloorVerify = { verify: (r, done) => done(verifyCavage(r, keys)) };
    const floorKinds: [string, () => Promise<Floor>][] = [
      ['bare uWebSockets.js answering 202, nothing else (the transport floor)', async () => ({ verify: null })],
      ['bare uWebSockets.js + the verification of (b), then 202, nothing stored', async () => ({ verify: onThread })],
      ['the same, verifying on 2 worker threads (one batch per turn)', async () => {
        const pool = verifyPool(2, keys);
        return { verify: pool, close: pool.close };
      }],
      ['bare uWebSockets.js + the verification on its thread + one group-committed insert per batch', async () => {
        const store = await groupCommitStore(url.toString());
        return { verify: onThread, store, close: store.close };
      }],
      ['the same, each batch appended to a local file and fdatasync\'d instead', async () => {
        const store = await appendLogStore(path.join(dataDir, 'floor-inbox.log'));
        return { verify: onThread, store, close: store.close };
      }],
    ];
    const floors: { label: string; rate: number; detail: string }[] = [];
    for (const [label, make] of floorKinds) {
      const kind = await make();
      const floor = await startFloor(kind.verify, kind.store);
      try {
        const f = await send(load, 32, floor.port);
        const ok = f.statuses['202'] ?? 0;
        floors.push({ label, rate: (ok / f.ms) * 1000, detail: `${fmtInt(ok)} in ${f.ms.toFixed(0)} ms; answers ${JSON.stringify(f.statuses)}` });
      } finally {
        floor.close();
        await kind.close?.();
      }
    }
    const warmed = await send(warm, 4);
    const waitStored = async (n: number, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      let have = 0;
      while ((have = await remoteStatuses()) < n && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return have;
    };
    await waitStored(actors.length, 60_000);
    const fetchesBefore = origins.reduce((n, o) => n + o.hits.length, 0);

    // (a) accepted/s.
    const t0 = performance.now();
    // Roost's thread's CPU time (user + system) while it takes the load: steadier than wall time
    // on a shared machine (this thread runs Roost and nothing else meanwhile; the sender is a
    // worker thread, crypto jobs run on libuv's pool).
    const cpu0 = process.threadCpuUsage();
    const db = roost.services.db;
    const stmts0 = { all: db.statements(), jobs: db.statements('jobs') };
    const result = await send(load, 32);
    const cpu1 = process.threadCpuUsage(cpu0);
    const jobStmts = db.statements('jobs') - stmts0.jobs;
    const requestStmts = db.statements() - stmts0.all - jobStmts;
    const stored = await waitStored(actors.length + creates, 30_000);
    const storedMs = performance.now() - t0;
    const fetchesDuring = origins.reduce((n, o) => n + o.hits.length, 0) - fetchesBefore;
    const accepted = result.statuses['202'] ?? 0;
    const acceptRate = (accepted / result.ms) * 1000;

    console.log(`${fmtInt(creates)} signed Create(Note) deliveries from ${actors.length} actors on ${ORIGINS} loopback servers to Roost's shared inbox (PostgreSQL ${name}; Roost in this process, the sender a worker thread, 32 at a time)\n`);
    console.log(
      table(
        ['what', 'per second', 'detail'],
        [
          [`node:crypto verify of the same signatures (baseline, one thread; RSA-${BENCH_RSA_BITS})`, fmtInt(verifyRate), `${fmtInt(load.length)} in ${verifyMs.toFixed(0)} ms`],
          ['deliveries accepted by Roost (202)', fmtInt(acceptRate), `${fmtInt(accepted)} in ${result.ms.toFixed(0)} ms; answers ${JSON.stringify(result.statuses)}`],
          [
            "  Roost's thread: CPU per POST (and as a rate)",
            fmtInt(load.length / ((cpu1.user + cpu1.system) / 1e6)),
            `${((cpu1.user + cpu1.system) / 1000 / load.length).toFixed(2)} ms (${((cpu1.user + cpu1.system) / 1000).toFixed(0)} ms CPU over ${result.ms.toFixed(0)} ms, Note processing meanwhile included)`,
          ],
          ['  SQL statements per POST: answering it / the queue workers meanwhile', '', `${(requestStmts / load.length).toFixed(2)} / ${(jobStmts / load.length).toFixed(2)}`],
          ...floors.map((f) => [f.label, fmtInt(f.rate), `${fmtRatio(f.rate / verifyRate)} of (b); ${f.detail}`]),
          ['Notes stored (from the first POST to the last row)', fmtInt((Math.max(0, stored - actors.length) / storedMs) * 1000), `${fmtInt(stored - actors.length)} of ${fmtInt(creates)} in ${storedMs.toFixed(0)} ms`],
        ],
      ),
    );
    const ratio = acceptRate / verifyRate;
    console.log(`\naccepted/s / verify/s: ${fmtRatio(ratio)} (goal >= 0.50x: ${ratio >= 0.5 ? 'met' : 'MISSED'})`);
    console.log(
      `the floor, bare uWebSockets.js verifying and storing nothing: ${fmtRatio(floors[1]!.rate / verifyRate)} of verify/s on its thread, ` +
        `${fmtRatio(floors[2]!.rate / verifyRate)} verifying on 2 threads; storing each batch durably ${fmtRatio(floors[3]!.rate / verifyRate)} (PostgreSQL), ` +
        `${fmtRatio(floors[4]!.rate / verifyRate)} (a local file); ` +
        `Roost / the better of the first two: ${fmtRatio(acceptRate / Math.max(floors[1]!.rate, floors[2]!.rate))}`,
    );
    console.log(`warm-up answers ${JSON.stringify(warmed.statuses)}; requests reaching the remote servers during the load: ${fetchesDuring} (keys cached)`);
    const fast = inboxFastPath(roost.federation)?.stats;
    console.log(`inbox fast path (src/federation/inbox-fast.ts): ${fast ? `${fmtInt(fast.accepted)} taken, handed on to Fedify ${JSON.stringify(fast.fallbacks)}` : 'none'}\n`);

    // (c) 1,500 account Deletes from one origin.
    const o = origins[0]!;
    const known = o.actors;
    const deletes: RawRequest[] = [];
    const unknownPaths = new Set<string>();
    const del = (actorId: string) => ({ '@context': AS_CONTEXT, id: `${actorId}#delete`, type: 'Delete', actor: actorId, to: [PUBLIC], object: actorId });
    for (const a of known) deletes.push(await signed(inbox, del(a.id), a.privateKey, a.keyId));
    for (const a of known) deletes.push(await signed(inbox, del(a.id), a.privateKey, a.keyId)); // gone by now
    for (let i = deletes.length; i < DELETES; i++) {
      const id = `${o.base}/users/gone${i}`;
      unknownPaths.add(`/users/gone${i}`);
      deletes.push(await signed(inbox, del(id), known[0]!.privateKey, `${id}#main-key`));
    }
    gc();
    await new Promise((r) => setTimeout(r, 500));
    gc();
    const steady = process.memoryUsage().heapUsed;
    let peak = steady;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 50);
    const phaseStart = performance.now();
    const answers: Record<string, number> = {};
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const interval = (deleteSeconds * 1000) / DELETES;
    const pending: Promise<void>[] = [];
    for (let i = 0; i < deletes.length; i++) {
      const due = phaseStart + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const r = deletes[i]!;
      pending.push(
        new Promise<void>((resolve) => {
          const req = http.request({ host: '127.0.0.1', port: roost.port, method: 'POST', path: r.path, headers: r.headers, agent }, (res) => {
            res.resume();
            res.on('end', () => {
              answers[res.statusCode ?? 0] = (answers[res.statusCode ?? 0] ?? 0) + 1;
              resolve();
            });
          });
          req.on('error', () => {
            answers.error = (answers.error ?? 0) + 1;
            resolve();
          });
          req.end(r.body);
        }),
      );
      // Sent twice: the known actors' second Delete goes after their first is processed.
      if (i === known.length - 1) {
        await Promise.all(pending);
        const deadline = performance.now() + 30_000;
        while (performance.now() < deadline) {
          const left = await sql.query(`select 1 from accounts where uri = any($1::text[])`, [known.map((a) => a.id)]);
          if (left.length === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
    await Promise.all(pending);
    const phaseMs = performance.now() - phaseStart;
    await new Promise((r) => setTimeout(r, 1000));
    clearInterval(sampler);
    agent.destroy();
    gc();
    await new Promise((r) => setTimeout(r, 500));
    gc();
    const after = process.memoryUsage().heapUsed;
    const phaseHits = o.hits.filter((h) => h.at >= phaseStart);
    const unknownHits = phaseHits.filter((h) => unknownPaths.has(h.what.split(' ')[1]!.split('#')[0]!));
    const goneHits = phaseHits.filter((h) => known.some((a) => h.what.endsWith(new URL(a.id).pathname)));
    const [left] = await sql.query<{ n: number }>(`select count(*)::int as n from accounts where uri = any($1::text[])`, [known.map((a) => a.id)]);
    const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;
    console.log(`${fmtInt(deletes.length)} account Deletes from ${o.base} over ${(phaseMs / 1000).toFixed(1)} s (${known.length} known actors, the same ${known.length} again once gone, ${fmtInt(unknownPaths.size)} never seen)\n`);
    console.log(
      table(
        ['what', 'value'],
        [
          ['answers', JSON.stringify(answers)],
          ['known actors left after their Delete', String(left!.n)],
          ['requests reaching the origin during the phase', String(phaseHits.length)],
          ['  of them for never-seen actors (goal 0)', String(unknownHits.length)],
          ['  of them for the deleted actors (goal 0)', String(goneHits.length)],
          ['heap after GC, steady (before the phase)', mb(steady)],
          ['heap after GC, after the phase', mb(after)],
          ['heap peak sampled during the phase', mb(peak)],
        ],
      ),
    );
    const heapRatio = after / steady;
    console.log(`\nheap after / steady: ${fmtRatio(heapRatio)} (goal <= 1.20x: ${heapRatio <= 1.2 ? 'met' : 'MISSED'}); peak / steady: ${fmtRatio(peak / steady)}`);
    console.log(`fetches for unknown or gone actors: ${unknownHits.length + goneHits.length} (goal 0: ${unknownHits.length + goneHits.length === 0 ? 'met' : 'MISSED'}); Roost still answering: ${(answers.error ?? 0) === 0 ? 'yes' : 'NO'}`);
    return 0;
  } finally {
    await roost.close();
    await Promise.all(origins.map((o) => o.close()));
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

if (!isMainThread) {
  if ((workerData as { kind?: string }).kind === 'verify') verifyWorker();
  else await loadWorker();
}
