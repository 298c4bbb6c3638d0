/**
 * The lab's engine on real instances: two Roosts in this process on the virtual network, one
 * clock, real HTTP signatures dated by that clock. Scenarios are built as objects here (the file
 * format has tests of its own).
 */
import { describe, it, expect, inject } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { runScenario } from '../../src/lab/runner.ts';
import type { InstanceSpec, LinkSpec, Scenario, Step } from '../../src/lab/scenario-types.ts';

const NO_FAULTS: LinkSpec = { latencyMs: 0, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0, errors: {}, slowMs: 0, down: false };

function roost(name: string, line: number): InstanceSpec {
  return { name, software: 'roost', registrations: 'open', federationMode: 'open', authorizedFetch: false, domainBlocks: [], line };
}

function scenario(steps: Step[], network: Partial<LinkSpec> = {}): Scenario {
  return {
    name: 'engine',
    file: 'engine.yaml',
    seed: 7,
    start: new Date('2026-01-01T00:00:00Z'),
    instances: [roost('alpha.test', 1), roost('beta.test', 2)],
    network: { defaults: { ...NO_FAULTS, ...network }, links: [] },
    accounts: [
      { handle: 'alice@alpha.test', username: 'alice', instance: 'alpha.test', locked: false, bot: false, line: 3 },
      { handle: 'bob@beta.test', username: 'bob', instance: 'beta.test', locked: false, bot: false, line: 4 },
    ],
    steps,
  };
}

const opts = () => ({
  tracePath: process.env.LAB_TRACE_DEBUG ?? null,
  log: pino({ level: 'silent' }),
  workDir: mkdtempSync(path.join(tmpdir(), 'roost-lab-test-')),
  databaseUrl: inject('testDatabase').url,
});

describe('the lab engine', () => {
  it('follows, posts and sees the post arrive after the link latency, on the lab clock', async () => {
    const result = await runScenario(
      scenario(
        [
          { kind: 'follow', as: 'bob@beta.test', target: 'alice@alpha.test', line: 10 },
          { kind: 'expect', assertion: { kind: 'following', account: 'bob@beta.test', target: 'alice@alpha.test', on: 'beta.test' }, withinMs: 60_000, line: 11 },
          { kind: 'post', as: 'alice@alpha.test', text: 'hello lab', name: 'p1', visibility: 'public', line: 12 },
          { kind: 'expect', assertion: { kind: 'visible', status: 'p1', on: 'beta.test', viewer: 'bob@beta.test' }, withinMs: 30_000, line: 13 },
          { kind: 'expect', assertion: { kind: 'followers', account: 'alice@alpha.test', on: ['alpha.test', 'beta.test'], count: 1 }, withinMs: 0, line: 14 },
        ],
        { latencyMs: 2_000 },
      ),
      opts(),
    );
    expect(result.steps.filter((s) => !s.ok)).toEqual([]);
    expect(result.assertions.map((a) => [a.line, a.ok, a.detail])).toEqual([
      [11, true, 'held'],
      [13, true, 'held'],
      [14, true, 'held'],
    ]);
    // The follow needs the Follow to reach alpha and the Accept to come back: two 2 s hops.
    expect(result.assertions[0]!.convergedMs).toBeGreaterThanOrEqual(4_000);
    // The post reaches beta one hop later.
    expect(result.assertions[1]!.convergedMs).toBe(2_000);
    const deliveries = result.records.filter((r) => r.kind === 'delivery');
    expect(deliveries.map((d) => (d as { type: string }).type)).toEqual(['Follow', 'Accept', 'Create']);
    expect(deliveries.every((d) => (d as { latencyMs: number; outcome: string }).latencyMs === 2_000 && (d as { outcome: string }).outcome === 'delivered')).toBe(true);
    const caused = result.records.find((r) => r.kind === 'caused') as { causeType: string; effectType: string; instance: string } | undefined;
    expect(caused).toMatchObject({ instance: 'alpha.test', causeType: 'Follow', effectType: 'Accept' });
    expect(result.records.some((r) => r.kind === 'event' && (r as { event: string }).event === 'status.created')).toBe(true);
  }, 120_000);

  it('holds deliveries across a partition and retries them on the lab clock once healed', async () => {
    const result = await runScenario(
      scenario([
        { kind: 'follow', as: 'bob@beta.test', target: 'alice@alpha.test', line: 10 },
        { kind: 'expect', assertion: { kind: 'following', account: 'bob@beta.test', target: 'alice@alpha.test', on: 'beta.test' }, withinMs: 60_000, line: 11 },
        { kind: 'partition', groups: [['alpha.test'], ['beta.test']], line: 12 },
        { kind: 'post', as: 'alice@alpha.test', text: 'during the partition', name: 'p1', visibility: 'public', line: 13 },
        { kind: 'expect', assertion: { kind: 'not_visible', status: 'p1', on: 'beta.test' }, withinMs: 0, line: 14 },
        { kind: 'advance', ms: 60_000, line: 15 },
        { kind: 'heal', line: 16 },
        { kind: 'expect', assertion: { kind: 'visible', status: 'p1', on: 'beta.test' }, withinMs: 6 * 3600_000, line: 17 },
      ]),
      opts(),
    );
    expect(result.steps.filter((s) => !s.ok)).toEqual([]);
    expect(result.assertions.map((a) => [a.line, a.ok])).toEqual([
      [11, true],
      [14, true],
      [17, true],
    ]);
    const creates = result.records.filter((r) => r.kind === 'delivery' && (r as { type: string }).type === 'Create') as { outcome: string; t: string }[];
    expect(creates[0]!.outcome).toBe('partitioned');
    expect(creates.at(-1)!.outcome).toBe('delivered');
    // Retried by the delivery lane's backoff, on the lab clock: hours of it took seconds.
    expect(result.simulatedMs).toBeGreaterThan(60_000);
    expect(result.records.filter((r) => r.kind === 'clock').length).toBeGreaterThan(0);
  }, 180_000);
});
