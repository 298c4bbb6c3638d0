/**
 * `roost lab run` as a researcher types it: a bad scenario stops before anything runs, naming
 * every line and reason; a good one runs, prints each assertion and writes its trace and report.
 */
import { describe, it, expect, inject } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';

describe('roost lab run', () => {
  it('refuses a bad scenario before anything runs, naming each line and reason (exit 1)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'roost-lab-cli-'));
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'name: bad',
        'instances:',
        '  alpha.test: {}',
        'accounts:',
        '  alice@alpha.test: {}',
        'steps:',
        '  - folow: { as: alice@alpha.test, target: bob@beta.test }',
        '  - post: { as: alice@alpha.test, text: hi, name: p1 }',
        '  - expect: { visible: { status: p1, on: alpha.test, viewer: carol@alpha.test } }',
        '  - crash: gamma.test',
        '',
      ].join('\n'),
    );
    const run = await runCli(['lab', 'run', file, '--out', dir], { ROOST_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toBe('roost: the scenario cannot run:');
    expect(lines.slice(1).map((l) => l.replace(`${file}:`, ''))).toEqual([
      '7: unknown step "folow" (did you mean follow?)',
      '9: expect.visible.viewer: account carol@alpha.test is not declared',
      '10: crash: instance gamma.test is not declared',
    ]);
    // Nothing ran: no trace was written (and the unreachable database was never asked).
    expect(existsSync(path.join(dir, 'bad-seed1.trace.jsonl'))).toBe(false);
  });

  it('runs a shipped scenario: each assertion printed, the trace, report and summary written (exit 0)', async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'roost-lab-cli-'));
    const run = await runCli(['lab', 'run', path.join(ROOT, 'config/lab/move-three.yaml'), '--out', out, '--seed', '9'], {
      ROOST_DATABASE_URL: inject('testDatabase').url,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('lab: move-three, seed 9, 5 instance(s), 12 step(s)');
    expect(lines.filter((l) => l.startsWith('PASS  line '))).toHaveLength(7);
    expect(lines.some((l) => l.startsWith('FAIL'))).toBe(false);
    expect(lines.find((l) => l.startsWith('OK: '))).toMatch(/^OK: 7 passed, 0 failed; \d+ s of lab time in [\d.]+ s$/);
    const trace = path.join(out, 'move-three-seed9.trace.jsonl');
    expect(lines.slice(-3)).toEqual([`trace: ${trace}`, `report: ${path.join(out, 'move-three-seed9.report.html')}`, `summary: ${path.join(out, 'move-three-seed9.summary.json')}`]);
    const records = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ kind: 'run.start', scenario: 'move-three', seed: 9 });
    expect(records.at(-1)).toMatchObject({ kind: 'run.end', passed: 7, failed: 0 });
    expect(readFileSync(path.join(out, 'move-three-seed9.report.html'), 'utf8')).toContain('<svg');
  }, 180_000);
});
