/**
 * The federation lab on this machine:
 *
 * 1. Footprint: 20 Roost instances in this process on one embedded PostgreSQL server (a database
 *    each), 2,000 accounts among them, left idle; the PSS of this process's whole tree (Roost and
 *    the server's processes) per instance, next to the same tree before the lab started (the
 *    process with Roost's modules loaded). Goal: ≤ 150 MB an instance.
 * 2. Speed: the shipped propagation-250 scenario (5 Roosts, 246 light peers, one post under the
 *    field's latencies): the wall time its steps take per simulated hour (goal ≤ 5 minutes), and
 *    the delivery figures next to the field's (mean 8.6 s, 0.96–240 s, about 10 % unreachable).
 *
 *   npm run bench -- lab [instances=20] [accounts=2000] [postgres-url]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startScenario } from '../../src/lab/runner.ts';
import { loadScenario } from '../../src/lab/scenario.ts';
import type { AccountSpec, InstanceSpec, Scenario } from '../../src/lab/scenario-types.ts';
import { fmtRatio, table } from './lib/report.ts';
import { processTree, pssMb } from './lib/proc.ts';

const root = path.resolve(import.meta.dirname, '../..');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (n: number) => `${n.toFixed(1)} MB`;

function footprintScenario(instances: number, accounts: number): Scenario {
  const names = Array.from({ length: instances }, (_, i) => `i${i + 1}.test`);
  const specs: InstanceSpec[] = names.map((name, i) => ({
    name,
    software: 'roost',
    registrations: 'open',
    federationMode: 'open',
    authorizedFetch: false,
    domainBlocks: [],
    line: i + 1,
  }));
  const people: AccountSpec[] = Array.from({ length: accounts }, (_, i) => {
    const instance = names[i % instances]!;
    const username = `u${i}`;
    return { handle: `${username}@${instance}`, username, instance, locked: false, bot: false, line: 100 + i };
  });
  return {
    name: 'lab-footprint',
    file: 'bench',
    seed: 1,
    start: new Date('2026-01-01T00:00:00Z'),
    instances: specs,
    network: { defaults: { latencyMs: 100, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0, errors: {}, slowMs: 0, down: false }, links: [] },
    accounts: people,
    steps: [],
  };
}

export async function main(args: string[]): Promise<number> {
  const instances = Number(args[0] ?? 20);
  const accounts = Number(args[1] ?? 2000);
  const databaseUrl = args[2];
  const log = pino({ level: 'warn' }, pino.destination({ fd: 2, sync: true }));
  const where = databaseUrl ? `the PostgreSQL server at ${new URL(databaseUrl).host}` : 'one embedded PostgreSQL server';

  // --- 1. footprint -------------------------------------------------------------------------
  await sleep(2000);
  const before = pssMb(processTree(process.pid));
  const t0 = performance.now();
  const lab = await startScenario(footprintScenario(instances, accounts), {
    tracePath: null,
    log,
    workDir: mkdtempSync(path.join(tmpdir(), 'roost-bench-lab-')),
    databaseUrl,
  });
  const startedS = (performance.now() - t0) / 1000;
  let after = 0;
  let roostOnly = 0;
  let connections = 0;
  let maxConnections = 0;
  try {
    // Idle, as a lab waits between steps: the pools settle, the timers run.
    await lab.lab.drain();
    await sleep(15_000);
    const pids = processTree(process.pid);
    after = pssMb(pids);
    roostOnly = pssMb([process.pid]);
    const sql = [...lab.lab.instances.values()][0]!.roost!.services.db.sql;
    const [row] = await sql.query<{ n: string; max: string }>(
      `select count(*) as n, current_setting('max_connections') as max from pg_stat_activity where backend_type = 'client backend' and datname like 'roost_lab_%'`,
    );
    connections = Number(row!.n);
    maxConnections = Number(row!.max);
  } finally {
    await lab.close();
  }
  const perInstance = (after - before) / instances;
  console.log(`\nlab footprint: ${instances} Roost instances, ${accounts} accounts, on ${where} (started in ${startedS.toFixed(1)} s)\n`);
  console.log(
    table(
      ['what', 'PSS'],
      [
        ['this process before the lab (node, Roost loaded)', mb(before)],
        [`the process tree with ${instances} instances, idle`, mb(after)],
        ['  of which this process (Roost, all instances)', mb(roostOnly)],
        ['  of which the database server', mb(after - roostOnly)],
        ['per instance: (tree − before) / instances', mb(perInstance)],
      ],
    ),
  );
  const perConn = connections / instances;
  const byMemory = Math.floor((24 * 1024 * 0.8) / perInstance);
  const byConnections = Math.floor((maxConnections - 10) / perConn);
  console.log(`\nper instance ${mb(perInstance)} against the goal of 150 MB: ${fmtRatio(perInstance / 150)} of it`);
  console.log(
    `database connections: ${connections} open for ${instances} instances (${perConn.toFixed(1)} each) of the server's ${maxConnections}: ` +
      `${byConnections} instances fit by connections, ${byMemory} by memory (80 % of 24 GiB): ${Math.min(byConnections, byMemory)} fit`,
  );

  // --- 2. propagation-250 ---------------------------------------------------------------------
  const scenario = await loadScenario(path.join(root, 'config/lab/propagation-250.yaml'));
  const p0 = performance.now();
  const run = await startScenario(scenario, { tracePath: null, log, workDir: mkdtempSync(path.join(tmpdir(), 'roost-bench-lab-')), databaseUrl });
  const setUpS = (performance.now() - p0) / 1000;
  let playS = 0;
  let result;
  try {
    const s0 = performance.now();
    const sim0 = run.lab.clock.now().getTime();
    await run.play();
    playS = (performance.now() - s0) / 1000;
    const simulatedH = (run.lab.clock.now().getTime() - sim0) / 3_600_000;
    result = { ...run.finish(), simulatedH };
  } finally {
    await run.close();
  }
  const probeCreates = result.records.filter((r) => r.kind === 'delivery' && r.type === 'Create' && r.from === 'origin.test');
  const firstOk = new Map<string, number>();
  for (const r of probeCreates) if (r.kind === 'delivery' && r.outcome === 'delivered' && !firstOk.has(r.to)) firstOk.set(r.to, r.latencyMs);
  const receivers = new Set(probeCreates.map((r) => (r as { to: string }).to));
  const firstAttempt = probeCreates.filter((r) => r.kind === 'delivery' && r.attempt === 1 && r.outcome === 'delivered').map((r) => (r as { latencyMs: number }).latencyMs);
  const mean = firstAttempt.reduce((a, b) => a + b, 0) / Math.max(1, firstAttempt.length) / 1000;
  const unreachable = receivers.size - firstOk.size;
  const perHourMin = playS / 60 / result.simulatedH;
  console.log(`\npropagation-250: ${scenario.instances.length} servers (5 Roosts), set up in ${setUpS.toFixed(1)} s; steps: ${result.simulatedH.toFixed(2)} simulated h in ${playS.toFixed(1)} s\n`);
  console.log(
    table(
      ['figure', 'this run', 'the field (2024)'],
      [
        ['receiving servers (inbox hosts)', String(receivers.size), '250'],
        ['delivery latency, mean (first attempt)', `${mean.toFixed(2)} s`, '8.6 s'],
        ['delivery latency, min – max', `${(Math.min(...firstAttempt) / 1000).toFixed(2)} – ${(Math.max(...firstAttempt) / 1000).toFixed(2)} s`, '0.96 – 240 s'],
        ['unreachable within the hour', `${unreachable} (${((100 * unreachable) / Math.max(1, receivers.size)).toFixed(1)} %)`, 'about 10 %'],
        ['assertions passed / failed', `${result.passed} / ${result.failed}`, ''],
      ],
    ),
  );
  console.log(`\nwall time per simulated hour ${perHourMin.toFixed(2)} min against the goal of 5 min: ${fmtRatio(perHourMin / 5)} of it`);
  return 0;
}
