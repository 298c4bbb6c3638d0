/**
 * `npm run bench -- push`: Web Push notifications per second end to end, next to web-push's own
 * payload generation rate, in the same run.
 *
 *   baseline    webpush.generateRequestDetails(subscription, payload, { vapidDetails }) in a loop:
 *               the ECDH + HKDF + AES-GCM encryption and a freshly signed VAPID JWT per message,
 *               nothing sent (what web-push does before its https request);
 *               measured in rounds interleaved with the two end-to-end runs below, medians
 *               reported (the machine's load moves during a run);
 *   end to end  a running Roost (startRoost, on PostgreSQL): pushNotificationSink (subscriptions,
 *               alerts and policy checked, one job per (notification, subscription) queued) →
 *               the push job pool (queue `push`) → payload built, encrypted (aes128gcm), VAPID
 *               header from the per-origin cache → POST through safe-fetch to a plain-HTTP push
 *               service on loopback in a process of its own, which answers 201; timed from the first sink
 *               call until the push service has received every message. A sample of the messages
 *               is decrypted with http_ece and its JWT verified, so the figure counts real pushes.
 *   cache       the same end-to-end run with the VAPID cache off (a JWT signed per push), and
 *               the cost of one signature next to one cache hit.
 *
 * Goal: end to end ≥ 0.5× the baseline rate.
 *
 * Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
 * scratch database is created beside it and dropped at the end), BENCH_PUSH_NOTIFICATIONS
 * (default 3000 per round), BENCH_PUSH_SUBSCRIBERS (default 50), BENCH_PUSH_ROUNDS (default 3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createECDH, randomBytes } from 'node:crypto';
import pg from 'pg';
import webpush from 'web-push';
// @ts-expect-error http_ece ships no types
import ece from 'http_ece';
import { loadConfig } from '../../config/index.ts';
import { startRoost } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { createPushSubscription } from '../../src/push/subscriptions.ts';
import { pushNotificationSink, vapidCacheOf, type PushableNotification } from '../../src/push/index.ts';
import { vapidHeaders } from '../../src/push/delivery.ts';
import { verifyJwt } from '../push/push-service.ts';
import { fmtInt, fmtRatio, table } from './lib/report.ts';
import { startChildServer } from './lib/child.ts';

interface Subscriber {
  accountId: string;
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
}

export async function main(): Promise<number> {
  const total = Number(process.env.BENCH_PUSH_NOTIFICATIONS ?? 3000);
  const subscribers = Number(process.env.BENCH_PUSH_SUBSCRIBERS ?? 50);
  const base = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_push_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-push-'));

  // The push service, in a process of its own: counts, keeps a sample to check.
  const child = await startChildServer(path.join(import.meta.dirname, 'push-service-server.ts'), { cpus: null });
  const serviceUrl = `http://127.0.0.1:${child.port}`;
  type Stats = { received: number; samples: { path: string; auth: string; body: string }[] };
  const stats = async (what = 'stats'): Promise<Stats> => (await fetch(`${serviceUrl}/${what}`)).json() as Promise<Stats>;

  const config = loadConfig({
    env: {},
    overrides: { host: '127.0.0.1', port: 0, dataDir, logLevel: 'silent', databaseUrl: url.toString(), federation: { allowPrivateAddresses: true } },
  });
  const roost = await startRoost(config, { domainFromPort: true, controlSocket: false });
  const { services } = roost;
  try {
    // Subscribers, each with a token and a subscription (mentions on, policy all, standard).
    const subs: Subscriber[] = [];
    const sender = await createLocalAccount(services, { username: 'sender', email: 'sender@bench.test', confirmed: true });
    for (let i = 0; i < subscribers; i++) {
      const u = await createLocalAccount(services, { username: `sub${i}`, email: `sub${i}@bench.test`, confirmed: true });
      const { token, row } = await issueAccessToken(services, { applicationId: null, userId: u.user.id, scopes: ['push'] });
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      await createPushSubscription(services, { tokenId: row.id, userId: u.user.id }, {
        accessToken: token, endpoint: `${serviceUrl}/s/${i}`, p256dh: ecdh.getPublicKey('base64url'), auth: auth.toString('base64url'),
        standard: true, data: { alerts: { mention: true } },
      });
      subs.push({ accountId: u.account.id, ecdh, auth });
    }
    const notification = (id: number): PushableNotification => ({
      id: String(id),
      type: 'mention',
      account: { id: sender.account.id, acct: 'sender', display_name: 'Sender', avatar_static: `${roost.url}/avatars/original/missing.png` },
      status: { id: String(id), content: `<p>@sub hello number ${id}, a status of ordinary length with a <a href="https://example.com/">link</a></p>`, spoiler_text: '' },
    });
    const samplePayload = JSON.stringify({
      access_token: randomBytes(32).toString('base64url'), preferred_locale: 'en', notification_id: '123456789012345678', notification_type: 'mention',
      icon: `${roost.url}/avatars/original/missing.png`, title: 'You were mentioned by Sender', body: '@sub hello number 1, a status of ordinary length with a link',
    });

    // Baseline: web-push's request generation (encryption + a signed JWT), one thread.
    const vapidDetails = { subject: 'mailto:admin@bench.test', publicKey: services.secrets.vapidPublicKey, privateKey: services.secrets.vapidPrivateKey };
    const raw = (n: number) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) {
        const s = subs[i % subs.length]!;
        webpush.generateRequestDetails(
          { endpoint: `${serviceUrl}/s/${i % subs.length}`, keys: { p256dh: s.ecdh.getPublicKey('base64url'), auth: s.auth.toString('base64url') } },
          samplePayload, { vapidDetails, TTL: 172800 },
        );
      }
      return n / ((performance.now() - t) / 1000);
    };
    raw(200);

    // End to end, through the sink, in batches of 100 notifications (as an event's fan-out would).
    const sink = pushNotificationSink(services);
    let nextId = 1;
    let samples: { path: string; auth: string; body: Buffer }[] = [];
    const endToEnd = async (n: number) => {
      await stats('reset');
      const t = performance.now();
      for (let i = 0; i < n; i += 100) {
        const batch = [];
        for (let j = i; j < Math.min(n, i + 100); j++) batch.push({ accountId: subs[j % subs.length]!.accountId, notification: notification(nextId++) });
        await sink(batch);
      }
      for (;;) {
        const s = await stats();
        if (s.received >= n) {
          samples = s.samples.map((x) => ({ ...x, body: Buffer.from(x.body, 'base64') }));
          break;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      return n / ((performance.now() - t) / 1000);
    };
    await endToEnd(200); // warm-up
    const cache = vapidCacheOf(services);

    // Rounds interleaved (baseline, cached, uncached), medians reported: the machine is shared and
    // its load moves during a run.
    const rounds = Number(process.env.BENCH_PUSH_ROUNDS ?? 3);
    const baselines: number[] = [];
    const cached: number[] = [];
    const uncached: number[] = [];
    const roostCpuUs: number[] = [];
    const serviceCpuUs: number[] = [];
    let e2eSigns = 0;
    let noCacheSigns = 0;
    let checked = 0;
    for (let r = 0; r < rounds; r++) {
      baselines.push(raw(total));
      cache.enabled = true;
      let s0 = cache.signs;
      const cpu0 = process.cpuUsage();
      const child0 = child.cpuMs();
      cached.push(await endToEnd(total));
      const cpu = process.cpuUsage(cpu0);
      roostCpuUs.push((cpu.user + cpu.system) / total);
      const child1 = child.cpuMs();
      if (child0 !== null && child1 !== null) serviceCpuUs.push(((child1 - child0) * 1000) / total);
      e2eSigns += cache.signs - s0;
      // Check a sample: the JWT verifies and the body decrypts to Mastodon's payload.
      for (const s of samples) {
        const m = /^vapid t=([^,]+), k=/.exec(s.auth)!;
        verifyJwt(m[1]!, services.secrets.vapidPublicKey);
        const sub = subs[Number(s.path.split('/').pop())]!;
        const payload = JSON.parse(ece.decrypt(s.body, { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.auth.toString('base64url') }).toString());
        if (payload.notification_type !== 'mention' || !payload.access_token) throw new Error('bad payload');
        checked++;
      }
      cache.enabled = false;
      cache.entries.clear();
      s0 = cache.signs;
      uncached.push(await endToEnd(total));
      noCacheSigns += cache.signs - s0;
      cache.enabled = true;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const baseline = median(baselines);
    const e2e = median(cached);
    const e2eNoCache = median(uncached);

    // One signature next to one cache hit.
    const endpoint = new URL(`${serviceUrl}/s/0`);
    const time = (n: number, fn: () => void) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) fn();
      return ((performance.now() - t) * 1000) / n;
    };
    cache.enabled = false;
    const signUs = time(2000, () => vapidHeaders(services, endpoint, 'aes128gcm'));
    cache.enabled = true;
    vapidHeaders(services, endpoint, 'aes128gcm');
    const hitUs = time(200_000, () => vapidHeaders(services, endpoint, 'aes128gcm'));

    console.log(`${fmtInt(total)} mention notifications to ${subscribers} subscribers, PostgreSQL (${name}), push service on loopback in its own process\n`);
    console.log(
      table(
        ['what', 'per second (median)', 'JWTs signed', 'rounds'],
        [
          ['web-push generateRequestDetails in a loop (baseline)', fmtInt(baseline), fmtInt(total * rounds), baselines.map(fmtInt).join(' ')],
          ['end to end: sink -> job -> encrypted POST (VAPID cached)', fmtInt(e2e), fmtInt(e2eSigns), cached.map(fmtInt).join(' ')],
          ['end to end, VAPID cache off', fmtInt(e2eNoCache), fmtInt(noCacheSigns), uncached.map(fmtInt).join(' ')],
        ],
      ),
    );
    const ratio = e2e / baseline;
    console.log(`\nend to end / baseline (medians of ${rounds} interleaved rounds): ${fmtRatio(ratio)} (goal >= 0.50x: ${ratio >= 0.5 ? 'met' : 'MISSED'}); cache off: ${fmtRatio(e2eNoCache / baseline)}`);
    console.log(
      `CPU per push: the Roost process ${median(roostCpuUs).toFixed(0)} us (queue, payload, encryption, POST; PostgreSQL's share not counted), ` +
        `the push service ${serviceCpuUs.length ? median(serviceCpuUs).toFixed(0) : '?'} us; web-push's generation ${(1e6 / baseline).toFixed(0)} us ` +
        `(CPU ratio ${fmtRatio(1e6 / baseline / median(roostCpuUs))}: the load-independent view of the goal)`,
    );
    console.log(`VAPID: one signature ${signUs.toFixed(0)} us, one cache hit ${hitUs.toFixed(2)} us; ${checked} sampled pushes decrypted and their JWTs verified`);
    return 0;
  } finally {
    await roost.close();
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
