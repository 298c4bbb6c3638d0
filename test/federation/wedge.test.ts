/**
 * The wedge (issue 24, item 5): Follows and Accepts arriving at the same moment at two local
 * users' personal inboxes once stopped an embedded instance for good. A follow's transaction asked
 * the domain policy whether the follower's server is silenced; a stale policy was read through
 * `db.sql`, outside the transaction, on the one session the transaction held (or, on a server, on a
 * second connection while holding one: with every pooled connection held so, the same).
 *
 * Each run starts a fresh instance (on a server: a pool of 2 connections), has its two users follow
 * three remote actors, then delivers at once, signed, every remote actor's Follow of both users and
 * its Accept of theirs to the users' own inboxes, while the domain policy goes stale again and
 * again (every question reads it anew, as after its TTL or an operator's change) and `GET /api/v1/instance` is asked
 * every 25 ms, each within 1 s. ROOST_WEDGE_RUNS=50 loops it 50 times.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, it, expect, afterAll } from 'vitest';
import { generateCryptoKeyPair, signRequest } from '@fedify/fedify';
import { exportSpki } from '@fedify/vocab-runtime';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';

const RUNS = Number(process.env.ROOST_WEDGE_RUNS ?? 3);
const REMOTES = ['r1', 'r2', 'r3'];
const LOCALS = ['alice', 'bob'];
const AS = 'https://www.w3.org/ns/activitystreams';

interface Remote {
  base: string;
  close(): Promise<void>;
  deliver(inbox: string, activity: Record<string, unknown>): Promise<Response>;
}

/** A remote server on loopback serving three actors (one RSA key) and accepting any POST. */
async function startRemote(): Promise<Remote> {
  const keys = await generateCryptoKeyPair('RSASSA-PKCS1-v1_5');
  const pem = await exportSpki(keys.publicKey);
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      req.resume();
      req.on('end', () => res.writeHead(202).end());
      return;
    }
    const name = /^\/users\/(\w+)$/.exec(req.url ?? '')?.[1];
    if (!name || !REMOTES.includes(name)) return void res.writeHead(404).end();
    const id = `${remote.base}/users/${name}`;
    res.writeHead(200, { 'content-type': 'application/activity+json' }).end(
      JSON.stringify({
        '@context': [AS, 'https://w3id.org/security/v1'],
        id,
        type: 'Person',
        preferredUsername: name,
        inbox: `${id}/inbox`,
        publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: pem },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const remote: Remote = {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
    async deliver(inbox, activity) {
      const request = new Request(inbox, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: JSON.stringify(activity) });
      return fetch(await signRequest(request, keys.privateKey, new URL(`${activity.actor as string}#main-key`), { spec: 'draft-cavage-http-signatures-12' }));
    },
  };
  return remote;
}

/** Log lines of an instance, parsed. */
function logSink(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, stream };
}

let remote: Remote | undefined;
let current: TestRoost | undefined;
afterAll(async () => {
  await current?.close();
  await remote?.close();
});

describe('concurrent Follow and Accept at two local inboxes', () => {
  it(`never wedges the instance (${RUNS} fresh instances)`, { timeout: 60_000 + RUNS * 30_000 }, async () => {
    remote = await startRemote();
    for (let run = 1; run <= RUNS; run++) {
      const log = logSink();
      const roost = (current = await startTestRoost(
        { databasePoolMax: 2, logLevel: 'warn', logFormat: 'json' },
        { logDestination: log.stream, logLevel: 'warn' },
      ));
      const locals = await Promise.all(LOCALS.map((u) => createLocalAccount(roost.services, { username: u, email: `${u}@wedge.test` }).then((r) => r.account)));
      const remotes = [];
      for (const r of REMOTES) remotes.push((await lookupRemoteAccount(roost.services, roost.federation, `${remote.base}/users/${r}`))!);
      // Our follows of theirs, pending until their Accept arrives.
      const ours = new Map<string, string>();
      for (const l of locals) for (const r of remotes) ours.set(`${l.username}>${r.username}`, (await followAccount(roost.services, l.id, r.id)).uri!);

      // Warm the cold paths once (the first inbox POST, the first Follow) before the clock starts.
      const first = `${remote.base}/users/${REMOTES[0]}`;
      await fetch(roost.at('/api/v1/instance')).then((r) => r.arrayBuffer());
      await remote.deliver(roost.at(`/users/${LOCALS[0]}/inbox`), { '@context': AS, id: `${first}#follows/${run}-${LOCALS[0]}`, type: 'Follow', actor: first, object: roost.at(`/users/${LOCALS[0]}`) });
      await eventually(async () => (await roost.services.db.sql.query(`select 1 from follows where state = 'accepted'`)).length === 1, 20_000, 'the warm-up follow');

      // Probe the instance all along: every answer within 1 s.
      const boundMs = 1000;
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const tStart = performance.now();
      let probing = true;
      const slow: string[] = [];
      const probe = (async () => {
        while (probing) {
          const t0 = performance.now();
          try {
            const res = await fetch(roost.at('/api/v1/instance'), { signal: AbortSignal.timeout(boundMs) });
            await res.arrayBuffer();
            if (res.status !== 200) slow.push(`status ${res.status}`);
          } catch (e) {
            slow.push(`no answer within ${boundMs} ms (${(e as Error).name}) after ${Math.round(performance.now() - t0)} ms, at ${Math.round(t0 - tStart)} ms`);
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      // The domain policy is stale whenever it is asked while the activities are handled (as after
      // its TTL, or an operator's change): every question reads it again.
      const policy = roost.services.domainPolicy;
      const snapshot = policy.snapshot.bind(policy);
      policy.snapshot = () => (policy.invalidate(), snapshot());
      try {
        const deliveries: Promise<Response>[] = [];
        for (const l of LOCALS) {
          const inbox = roost.at(`/users/${l}/inbox`);
          for (const r of REMOTES) {
            const actor = `${remote.base}/users/${r}`;
            if (!(l === LOCALS[0] && r === REMOTES[0])) {
              deliveries.push(remote.deliver(inbox, { '@context': AS, id: `${actor}#follows/${run}-${l}`, type: 'Follow', actor, object: roost.at(`/users/${l}`) }));
            }
            deliveries.push(remote.deliver(inbox, { '@context': AS, id: `${actor}#accepts/${run}-${l}`, type: 'Accept', actor, object: ours.get(`${l}>${r}`) }));
          }
        }
        const answers = await Promise.all(deliveries);
        expect(answers.map((a) => a.status).filter((s) => s >= 300)).toEqual([]);
        // Every follow, both ways, ends accepted.
        await eventually(
          async () => {
            const [row] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from follows where state = 'accepted'`);
            return row!.n === LOCALS.length * REMOTES.length * 2;
          },
          20_000,
          `run ${run}: all ${LOCALS.length * REMOTES.length * 2} follows accepted`,
        );
      } finally {
        policy.snapshot = snapshot;
        probing = false;
        await probe;
      }
      lag.disable();
      console.log(`run ${run}: event loop delay max ${Math.round(lag.max / 1e6)} ms, p99 ${Math.round(lag.percentile(99) / 1e6)} ms, total ${Math.round(performance.now() - tStart)} ms`);
      if (slow.length) console.log(log.lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.err ?? "").slice(0, 600)}`).join("\n"));
      expect(slow, `run ${run}`).toEqual([]);
      // Nothing sent a statement outside its own open transaction.
      expect(log.lines.filter((l) => String(l.msg).includes('outside its open transaction')).map((l) => l.msg)).toEqual([]);
      await roost.close();
      current = undefined;
    }
  });
});
