// The sending side of `npm run bench -- delivery`, one process per sender so that each one's
// memory is its own: `roost` (a whole Roost instance on a scratch PostgreSQL database, its
// delivery lanes running in this process) or `fedify` (stock Fedify: createFederation with its
// InProcessMessageQueue, an actor, its keys and a followers dispatcher, nothing else).
// Driven over IPC by delivery.ts (fork): setup → ready; send → sent; reply → replied;
// memory → the peak heap/RSS growth since the last send; exit.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createFederation, InProcessMessageQueue, MemoryKvStore, type Federation } from '@fedify/fedify';
import { rsaKeyPair } from './lib/keys.ts';
import { Create, Note, Person, PUBLIC_COLLECTION, type Recipient } from '@fedify/vocab';
import { loadConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { sendActivity } from '../../src/federation/delivery.ts';

const mode = process.argv[2] as 'roost' | 'fedify';
const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

interface Msg {
  cmd: string;
  urls?: string[];
  case?: 'shared' | 'single';
  n?: number;
}
const reply = (m: object) => process.send!(m);

// Memory sampling between a send and the memory report.
let base = { heap: 0, rss: 0 };
let peak = { heap: 0, rss: 0 };
let sampler: NodeJS.Timeout | null = null;
function startSampling() {
  gc();
  const m = process.memoryUsage();
  base = { heap: m.heapUsed, rss: m.rss };
  peak = { ...base };
  sampler = setInterval(() => {
    const u = process.memoryUsage();
    peak.heap = Math.max(peak.heap, u.heapUsed);
    peak.rss = Math.max(peak.rss, u.rss);
  }, 20);
}

function note(origin: string, sender: string, n: number, inReplyTo?: string) {
  const actor = new URL(`/users/${sender}`, origin);
  const id = new URL(`/users/${sender}/statuses/${n}`, origin);
  return new Create({
    id: new URL(`${id.href}/activity`),
    actor,
    to: PUBLIC_COLLECTION,
    cc: new URL(`${actor.href}/followers`),
    object: new Note({
      id,
      attribution: actor,
      to: PUBLIC_COLLECTION,
      cc: new URL(`${actor.href}/followers`),
      content: `<p>Post number ${n} from the delivery bench: hello to every follower.</p>`,
      replyTarget: inReplyTo ? new URL(inReplyTo) : null,
    }),
  });
}

/** The remote follower `g` (1-based) of a case, on sink server g mod servers. */
function follower(urls: string[], kind: 'shared' | 'single', g: number): Recipient {
  const base = urls[g % urls.length]!;
  return {
    id: new URL(`${base}/users/${kind}${g}`),
    inboxId: new URL(`${base}/users/${kind}${g}/inbox`),
    endpoints: kind === 'shared' ? { sharedInbox: new URL(`${base}/inbox`) } : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Roost

let roost: RunningRoost | undefined;
let dropDb: (() => Promise<void>) | undefined;
let dataDir: string | undefined;

async function setupRoost(urls: string[]) {
  const admin = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_delivery_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  dropDb = async () => {
    const d = new pg.Client({ connectionString: admin });
    await d.connect();
    await d.query(`drop database if exists ${name} with (force)`);
    await d.end();
  };
  const url = new URL(admin);
  url.pathname = `/${name}`;
  dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-delivery-'));
  const config = loadConfig({
    env: {},
    overrides: {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: url.toString(),
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
      federation: { allowPrivateAddresses: true, ...(process.env.BENCH_CONCURRENCY ? { deliveryConcurrency: Number(process.env.BENCH_CONCURRENCY) } : {}) },
    },
  });
  roost = await startRoost(config, { domainFromPort: true, controlSocket: false });
  const services = roost.services;
  const ids: Record<string, string> = {};
  for (const u of ['shared', 'single', 'replier']) {
    const { account } = await createLocalAccount(services, { username: u, email: `${u}@bench.test`, confirmed: true });
    ids[u] = account.id;
  }
  // 10,000 remote followers per case (rows as a migration would write them: the fan-out reads them).
  let next = 5_000_000_000;
  for (const kind of ['shared', 'single'] as const) {
    const start = next;
    await services.db.sql.query(
      `insert into accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, actor_type, created_at, updated_at)
       select $1::bigint + g, $2 || g, split_part(($3::text[])[1 + g % $5], '/', 3), ($3::text[])[1 + g % $5] || '/users/' || $2 || g,
              ($3::text[])[1 + g % $5] || '/@' || $2 || g, ($3::text[])[1 + g % $5] || '/users/' || $2 || g || '/inbox',
              case when $2 = 'shared' then ($3::text[])[1 + g % $5] || '/inbox' end, 'Person', now(), now()
         from generate_series(1, $4::int) g`,
      [start, kind, urls, FOLLOWERS, urls.length],
    );
    await services.db.sql.query(
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at)
       select $1::bigint + g, $1::bigint + g, $2, 'accepted', now(), now() from generate_series(1, $3::int) g`,
      [start, ids[kind], FOLLOWERS],
    );
    next += FOLLOWERS + 1;
  }
  await services.db.sql.query('analyze');
}

async function sendRoost(kind: 'shared' | 'single', n: number): Promise<string> {
  const ctx = roost!.federation.createContext(new URL(roost!.config.publicUrl), undefined);
  const activity = note(roost!.config.publicUrl, kind, n);
  return (await sendActivity(roost!.services, ctx, kind, 'followers', activity, { preferSharedInbox: true }))!;
}

async function replyRoost(urls: string[], n: number): Promise<string> {
  const ctx = roost!.federation.createContext(new URL(roost!.config.publicUrl), undefined);
  const author: Recipient = { id: new URL(`${urls[0]}/users/author`), inboxId: new URL(`${urls[0]}/users/author/inbox`), endpoints: null };
  const activity = note(roost!.config.publicUrl, 'replier', n, `${urls[0]}/users/author/statuses/1`);
  return (await sendActivity(roost!.services, ctx, 'replier', author, activity))!;
}

// ---------------------------------------------------------------------------------------------
// Stock Fedify

let fedify: Federation<void> | undefined;
const FEDIFY_ORIGIN = 'http://sender.bench.test';

async function setupFedify(urls: string[]) {
  // RSA-2048 as Roost's own keys (Fedify's generateCryptoKeyPair would make 4096-bit ones).
  const keys = {
    shared: await rsaKeyPair(),
    single: await rsaKeyPair(),
    replier: await rsaKeyPair(),
  } as Record<string, Awaited<ReturnType<typeof rsaKeyPair>>>;
  const followers: Record<string, Recipient[]> = { shared: [], single: [], replier: [] };
  for (const kind of ['shared', 'single'] as const) {
    for (let g = 1; g <= FOLLOWERS; g++) followers[kind]!.push(follower(urls, kind, g));
  }
  fedify = createFederation<void>({ kv: new MemoryKvStore(), queue: new InProcessMessageQueue(), origin: FEDIFY_ORIGIN });
  fedify
    .setActorDispatcher('/users/{identifier}', (ctx, identifier) => (keys[identifier] ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }) : null))
    .setKeyPairsDispatcher((_ctx, identifier) => (keys[identifier] ? [keys[identifier]!] : []));
  fedify.setFollowersDispatcher('/users/{identifier}/followers', (_ctx, identifier) => ({ items: followers[identifier] ?? [] }));
}

async function sendFedify(kind: 'shared' | 'single', n: number): Promise<string> {
  const ctx = fedify!.createContext(new URL(FEDIFY_ORIGIN), undefined);
  const activity = note(FEDIFY_ORIGIN, kind, n);
  await ctx.sendActivity({ identifier: kind }, 'followers', activity, { preferSharedInbox: true });
  return activity.id!.href;
}

async function replyFedify(urls: string[], n: number): Promise<string> {
  const ctx = fedify!.createContext(new URL(FEDIFY_ORIGIN), undefined);
  const author: Recipient = { id: new URL(`${urls[0]}/users/author`), inboxId: new URL(`${urls[0]}/users/author/inbox`), endpoints: null };
  const activity = note(FEDIFY_ORIGIN, 'replier', n, `${urls[0]}/users/author/statuses/1`);
  await ctx.sendActivity({ identifier: 'replier' }, author, activity);
  return activity.id!.href;
}

// ---------------------------------------------------------------------------------------------

let urls: string[] = [];
process.on('message', (m: Msg) => {
  void (async () => {
    try {
      switch (m.cmd) {
        case 'setup':
          urls = m.urls!;
          if (mode === 'roost') await setupRoost(urls);
          else await setupFedify(urls);
          return reply({ cmd: 'ready' });
        case 'send': {
          startSampling();
          const id = mode === 'roost' ? await sendRoost(m.case!, m.n!) : await sendFedify(m.case!, m.n!);
          return reply({ cmd: 'sent', id });
        }
        case 'reply': {
          const id = mode === 'roost' ? await replyRoost(urls, m.n!) : await replyFedify(urls, m.n!);
          return reply({ cmd: 'replied', id });
        }
        case 'memory': {
          if (sampler) clearInterval(sampler);
          sampler = null;
          return reply({ cmd: 'memory', heap: peak.heap - base.heap, rss: peak.rss - base.rss });
        }
        case 'exit':
          await roost?.close();
          await dropDb?.();
          if (dataDir) rmSync(dataDir, { recursive: true, force: true });
          process.exit(0);
      }
    } catch (e) {
      reply({ cmd: 'error', error: String((e as Error)?.stack ?? e) });
    }
  })();
});
reply({ cmd: 'started' });
