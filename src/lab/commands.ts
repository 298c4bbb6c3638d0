/**
 * `roost lab run` and `roost lab serve`: a scenario file in, a trace, a report and a verdict out
 * (or a lab left running for an outside harness). The database is the operator's server when
 * ROOST_DATABASE_URL is set (a database per instance, dropped after), else an embedded
 * PostgreSQL in a temporary directory.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { RoostError } from '../lib/errors.ts';
import { loadScenario } from './scenario.ts';
import { ScenarioError } from './scenario-types.ts';
import { runScenario, startScenario } from './runner.ts';
import { writeReport } from './report.ts';
import { startLabControl } from './control.ts';

export interface LabCommandOptions {
  log: Logger;
  databaseUrl?: string;
  /** Lines of the command's answer (stdout). */
  out: (line: string) => void;
}

async function scenarioFrom(file: string, seed: number | undefined) {
  try {
    return await loadScenario(file, { seed });
  } catch (e) {
    if (e instanceof ScenarioError) throw new RoostError(422, `the scenario cannot run:\n${e.message}`);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') throw new RoostError(422, `lab run: ${(e as Error).message}`);
    throw e;
  }
}

function workDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'roost-lab-'));
}

/** Runs a scenario; the exit code is 0 when every step and assertion passed. */
export async function labRun(file: string, opts: LabCommandOptions & { seed?: number; outDir: string; report: boolean }): Promise<number> {
  const scenario = await scenarioFrom(file, opts.seed);
  mkdirSync(opts.outDir, { recursive: true });
  const tracePath = path.join(opts.outDir, `${scenario.name}-seed${scenario.seed}.trace.jsonl`);
  opts.out(`lab: ${scenario.name}, seed ${scenario.seed}, ${scenario.instances.length} instance(s), ${scenario.steps.length} step(s)`);
  const result = await runScenario(scenario, { tracePath, log: opts.log, workDir: workDir(), databaseUrl: opts.databaseUrl });
  for (const step of result.steps.filter((s) => !s.ok)) opts.out(`STEP FAILED  line ${step.line}: ${step.step}\n             ${step.detail}`);
  for (const a of result.assertions) {
    const when = a.ok ? ` (after ${a.convergedMs} ms of lab time)` : `: ${a.detail}`;
    opts.out(`${a.ok ? 'PASS' : 'FAIL'}  line ${a.line}: ${a.assertion}${when}`);
  }
  const simulated = Math.round(result.simulatedMs / 1000);
  opts.out(`${result.failed === 0 ? 'OK' : 'FAILED'}: ${result.passed} passed, ${result.failed} failed; ${simulated} s of lab time in ${(result.wallMs / 1000).toFixed(1)} s`);
  opts.out(`trace: ${tracePath}`);
  if (opts.report) {
    const written = await writeReport(tracePath, opts.outDir);
    opts.out(`report: ${written.html}`);
    opts.out(`summary: ${written.json}`);
  }
  return result.failed === 0 ? 0 : 1;
}

/** Starts a scenario's lab, plays its steps, and serves the control API until `stop` resolves. */
export async function labServe(file: string, opts: LabCommandOptions & { port: number; stop: Promise<void> }): Promise<void> {
  const scenario = await scenarioFrom(file, undefined);
  const started = await startScenario(scenario, { tracePath: null, log: opts.log, workDir: workDir(), databaseUrl: opts.databaseUrl });
  try {
    await started.play();
    const control = await startLabControl(started.lab, opts.port);
    opts.out(`lab: ${scenario.name} is up; its clock reads ${started.lab.clock.now().toISOString()}`);
    for (const i of started.lab.instances.values()) opts.out(`  ${i.name}: http://127.0.0.1:${i.roost?.port} (send Host: ${i.name})`);
    opts.out(`control: http://127.0.0.1:${control.port}/lab`);
    opts.out(`token: ${control.token}`);
    await opts.stop;
    await control.close();
  } finally {
    await started.close();
  }
}
