/**
 * The lab's scenario parser: the shipped examples parse, and each kind of bad file fails before
 * anything runs with every problem, its line and its reason. Pure: no database, no server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { AJV_OPTIONS, loadScenario, parseDuration, parseScenario, SCENARIO_SCHEMA_PATH } from '../../src/lab/scenario.ts';
import { ScenarioError, type Scenario } from '../../src/lab/scenario-types.ts';

const Ajv2020 = Ajv2020Module.default;
const LAB_DIR = path.resolve(import.meta.dirname, '../../config/lab');

/** The problems of a bad file as `line: message`, or a failure when it parses. */
function problems(text: string): string[] {
  try {
    parseScenario(text, 'bad.yaml');
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    return e.problems.map((p) => `${p.line}: ${p.message}`);
  }
  throw new Error('the scenario parsed');
}

// Lines 1–12; the steps a case appends start at line 13.
const HEAD = `name: t
instances:
  alpha.test: {}
  beta.test: {}
  peer1.test: { software: mastodon }
accounts:
  alice@alpha.test: {}
  bob@beta.test: {}
  pete@peer1.test: {}
network:
  latency: 100ms
steps:
`;

const withSteps = (...steps: string[]) => HEAD + steps.map((s) => `  - ${s}\n`).join('');

describe('the shipped scenarios', () => {
  const files = readdirSync(LAB_DIR).filter((f) => f.endsWith('.yaml')).sort();

  it('are the seven the lab promises', () => {
    expect(files).toEqual([
      'domain-block-conversation.yaml',
      'fanout-50.yaml',
      'missing-replies-completed.yaml',
      'missing-replies.yaml',
      'move-three.yaml',
      'poll-partition.yaml',
      'propagation-250.yaml',
    ]);
  });

  it.each(files)('%s parses', async (file) => {
    const scenario = await loadScenario(path.join(LAB_DIR, file));
    expect(scenario.name).toBe(file.replace(/\.yaml$/, ''));
    expect(scenario.steps.length).toBeGreaterThan(5);
    expect(scenario.steps.some((s) => s.kind === 'expect')).toBe(true);
  });

  it('poll-partition: five Roosts, a partition between votes, a heal', async () => {
    const s = await loadScenario(path.join(LAB_DIR, 'poll-partition.yaml'));
    expect(s.instances.map((i) => [i.name, i.software])).toEqual([
      ['alpha.test', 'roost'],
      ['beta.test', 'roost'],
      ['gamma.test', 'roost'],
      ['delta.test', 'roost'],
      ['epsilon.test', 'roost'],
    ]);
    expect(s.seed).toBe(42);
    expect(s.start.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    const kinds = s.steps.map((x) => x.kind);
    expect(kinds.indexOf('vote')).toBeLessThan(kinds.indexOf('partition'));
    expect(kinds.lastIndexOf('vote')).toBeGreaterThan(kinds.indexOf('partition'));
    expect(kinds.indexOf('heal')).toBeGreaterThan(kinds.indexOf('partition'));
    const post = s.steps.find((x) => x.kind === 'post');
    expect(post).toMatchObject({ name: 'p1', poll: { options: ['tea', 'coffee', 'water'], expiresInMs: 3_600_000, multiple: false } });
    expect(s.steps.find((x) => x.kind === 'partition')).toMatchObject({
      groups: [['alpha.test', 'beta.test'], ['gamma.test', 'delta.test', 'epsilon.test']],
    });
  });

  it('fanout-50: 3 full Roosts and 47 light peers of mixed software follow one account', async () => {
    const s = await loadScenario(path.join(LAB_DIR, 'fanout-50.yaml'));
    const followers = s.steps.filter((x) => x.kind === 'follow');
    expect(followers).toHaveLength(50);
    const hosts = new Set(followers.map((f) => (f as { as: string }).as.split('@')[1]));
    const software = s.instances.filter((i) => hosts.has(i.name)).map((i) => i.software);
    expect(software.filter((x) => x === 'roost')).toHaveLength(3);
    expect(new Set(software.filter((x) => x !== 'roost'))).toEqual(new Set(['mastodon', 'gotosocial', 'misskey', 'pleroma']));
    expect(s.network.defaults.loss).toBe(0.05);
  });

  it('propagation-250: 250 receivers, field latencies, a seeded tenth of the peers down', async () => {
    const file = path.join(LAB_DIR, 'propagation-250.yaml');
    const s = await loadScenario(file);
    expect(s.instances).toHaveLength(251);
    expect(s.instances.filter((i) => i.software === 'roost').map((i) => i.name)).toEqual([
      'origin.test', 'roost1.test', 'roost2.test', 'roost3.test', 'roost4.test',
    ]);
    // The generator deals the software in turn.
    expect(s.instances.slice(5, 10).map((i) => [i.name, i.software])).toEqual([
      ['peer1.test', 'mastodon'],
      ['peer2.test', 'gotosocial'],
      ['peer3.test', 'misskey'],
      ['peer4.test', 'pleroma'],
      ['peer5.test', 'mastodon'],
    ]);
    expect(s.network.links[0]).toEqual({
      from: 'origin.test',
      to: '*',
      latencyDist: { kind: 'lognormal', meanMs: 8600, minMs: 960, maxMs: 240_000 },
      line: 29,
    });
    expect(s.network.links).toHaveLength(1);
    // A tenth of the peers go down once everyone follows: a link step's seeded choice.
    const goDown = s.steps.find((st) => st.kind === 'link');
    const down = goDown?.kind === 'link' ? goDown.rules : [];
    expect(down).toHaveLength(25); // round(0.1 × 246)
    expect(down.every((l) => l.from === '*' && l.down === true && /^peer[0-9]+\.test$/.test(l.to) && l.line === 540)).toBe(true);
    // The same seed picks the same hosts; another seed picks others.
    const downOf = (sc: typeof s) => sc.steps.flatMap((st) => (st.kind === 'link' ? st.rules.map((l) => l.to) : []));
    const again = await loadScenario(file);
    expect(downOf(again)).toEqual(down.map((l) => l.to));
    const text = readFileSync(file, 'utf8').replace('seed: 2024', 'seed: 2025');
    const reseeded = downOf(parseScenario(text, file));
    expect(reseeded).toHaveLength(25);
    expect(reseeded).not.toEqual(down.map((l) => l.to));
  });
});

describe('a scenario in full', () => {
  it("docs/lab.md's full example parses", () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/lab.md'), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    const s = parseScenario(example!, 'docs/lab.md');
    expect(s.name).toBe('poll-partition');
    // 4 declared, peer2 … peer21 generated; the pattern rule becomes one rule per peer, plus two down.
    expect(s.instances).toHaveLength(24);
    expect(s.network.links).toHaveLength(1 + 21 + 2);
  });

  it('reads every step, default and field into the types', () => {
    const s: Scenario = parseScenario(
      `name: all
description: every step once
seed: 9
start: 2026-03-01T12:00:00Z
instances:
  alpha.test: {}
  beta.test: { registrations: approval, authorized_fetch: true, federation: allowlist,
               domain_blocks: [{ domain: gamma.test, severity: silence }] }
  gamma.test:
  peer1.test: { software: gotosocial }
network:
  latency: 200ms
  jitter: 50ms
  loss: 0.01
  duplicate: 0.02
  reorder: 0.03
  errors: { 500: 0.01, 429: 0.02 }
  slow: 1s
  links:
    - { from: alpha.test, to: '*', latency: 2s, loss: 0.1 }
accounts:
  alice@alpha.test: { display_name: Alice, locked: true, bot: false }
  alice2@beta.test: {}
  bob@beta.test:
  pete@peer1.test: {}
steps:
  - follow: { as: bob@beta.test, target: alice@alpha.test }
  - post: { as: alice@alpha.test, text: "Which one?", name: p1, visibility: unlisted,
            poll: { options: [tea, coffee], expires_in: 1h, multiple: true } }
  - reply: { as: pete@peer1.test, to: p1, text: "tea", name: r1 }
  - vote: { as: bob@beta.test, poll: p1, choices: [0, 1] }
  - boost: { as: pete@peer1.test, status: p1 }
  - like: { as: bob@beta.test, status: r1 }
  - edit: { as: alice@alpha.test, status: p1, text: "Which one, really?" }
  - report: { as: bob@beta.test, target: pete@peer1.test, statuses: [r1], comment: spam, forward: true }
  - block: { as: bob@beta.test, target: pete@peer1.test }
  - unfollow: { as: bob@beta.test, target: alice@alpha.test }
  - domain_block: { on: alpha.test, domain: beta.test, severity: silence }
  - advance: 7d
  - partition: [[alpha.test], [beta.test, gamma.test]]
  - heal: {}
  - link: { from: alpha.test, to: beta.test, loss: 0.5 }
  - crash: alpha.test
  - restart: alpha.test
  - expect: { visible: { status: p1, on: beta.test, viewer: bob@beta.test }, within: 30s }
  - expect: { not_visible: { status: r1, on: gamma.test } }
  - expect: { followers: { account: alice@alpha.test, on: [alpha.test, beta.test], count: 1 }, within: 1m }
  - expect: { poll: { status: p1, on: alpha.test, votes: [1, 1] }, within: 10m }
  - expect: { thread: { status: p1, on: beta.test, replies: 1 }, within: 250 }
  - expect: { following: { account: bob@beta.test, target: alice@alpha.test, on: beta.test } }
  - delete: { as: alice@alpha.test, status: p1 }
  - move: { from: alice@alpha.test, to: alice2@beta.test }
`,
      'all.yaml',
    );
    expect(s).toMatchObject({ name: 'all', description: 'every step once', file: 'all.yaml', seed: 9 });
    expect(s.start.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(s.instances).toEqual([
      { name: 'alpha.test', software: 'roost', registrations: 'open', federationMode: 'open', authorizedFetch: false, domainBlocks: [], line: 6 },
      {
        name: 'beta.test',
        software: 'roost',
        registrations: 'approval',
        federationMode: 'allowlist',
        authorizedFetch: true,
        domainBlocks: [{ domain: 'gamma.test', severity: 'silence' }],
        line: 7,
      },
      { name: 'gamma.test', software: 'roost', registrations: 'open', federationMode: 'open', authorizedFetch: false, domainBlocks: [], line: 9 },
      { name: 'peer1.test', software: 'gotosocial', registrations: 'open', federationMode: 'open', authorizedFetch: false, domainBlocks: [], line: 10 },
    ]);
    expect(s.network).toEqual({
      defaults: { latencyMs: 200, jitterMs: 50, loss: 0.01, duplicate: 0.02, reorder: 0.03, errors: { '500': 0.01, '429': 0.02 }, slowMs: 1000, down: false },
      links: [{ from: 'alpha.test', to: '*', latencyMs: 2000, loss: 0.1, line: 20 }],
    });
    expect(s.accounts).toEqual([
      { handle: 'alice@alpha.test', username: 'alice', instance: 'alpha.test', displayName: 'Alice', locked: true, bot: false, line: 22 },
      { handle: 'alice2@beta.test', username: 'alice2', instance: 'beta.test', locked: false, bot: false, line: 23 },
      { handle: 'bob@beta.test', username: 'bob', instance: 'beta.test', locked: false, bot: false, line: 24 },
      { handle: 'pete@peer1.test', username: 'pete', instance: 'peer1.test', locked: false, bot: false, line: 25 },
    ]);
    expect(s.steps).toEqual([
      { kind: 'follow', as: 'bob@beta.test', target: 'alice@alpha.test', line: 27 },
      {
        kind: 'post',
        as: 'alice@alpha.test',
        text: 'Which one?',
        name: 'p1',
        visibility: 'unlisted',
        poll: { options: ['tea', 'coffee'], expiresInMs: 3_600_000, multiple: true },
        line: 28,
      },
      { kind: 'reply', as: 'pete@peer1.test', to: 'p1', text: 'tea', name: 'r1', visibility: 'public', line: 30 },
      { kind: 'vote', as: 'bob@beta.test', poll: 'p1', choices: [0, 1], line: 31 },
      { kind: 'boost', as: 'pete@peer1.test', status: 'p1', line: 32 },
      { kind: 'like', as: 'bob@beta.test', status: 'r1', line: 33 },
      { kind: 'edit', as: 'alice@alpha.test', status: 'p1', text: 'Which one, really?', line: 34 },
      { kind: 'report', as: 'bob@beta.test', target: 'pete@peer1.test', statuses: ['r1'], comment: 'spam', forward: true, line: 35 },
      { kind: 'block', as: 'bob@beta.test', target: 'pete@peer1.test', line: 36 },
      { kind: 'unfollow', as: 'bob@beta.test', target: 'alice@alpha.test', line: 37 },
      { kind: 'domain_block', on: 'alpha.test', domain: 'beta.test', severity: 'silence', line: 38 },
      { kind: 'advance', ms: 7 * 86_400_000, line: 39 },
      { kind: 'partition', groups: [['alpha.test'], ['beta.test', 'gamma.test']], line: 40 },
      { kind: 'heal', line: 41 },
      { kind: 'link', rules: [{ from: 'alpha.test', to: 'beta.test', loss: 0.5, line: 42 }], line: 42 },
      { kind: 'crash', instance: 'alpha.test', line: 43 },
      { kind: 'restart', instance: 'alpha.test', line: 44 },
      { kind: 'expect', assertion: { kind: 'visible', status: 'p1', on: 'beta.test', viewer: 'bob@beta.test' }, withinMs: 30_000, line: 45 },
      { kind: 'expect', assertion: { kind: 'not_visible', status: 'r1', on: 'gamma.test' }, withinMs: 0, line: 46 },
      { kind: 'expect', assertion: { kind: 'followers', account: 'alice@alpha.test', on: ['alpha.test', 'beta.test'], count: 1 }, withinMs: 60_000, line: 47 },
      { kind: 'expect', assertion: { kind: 'poll', status: 'p1', on: ['alpha.test'], votes: [1, 1] }, withinMs: 600_000, line: 48 },
      { kind: 'expect', assertion: { kind: 'thread', status: 'p1', on: 'beta.test', replies: 1 }, withinMs: 250, line: 49 },
      { kind: 'expect', assertion: { kind: 'following', account: 'bob@beta.test', target: 'alice@alpha.test', on: 'beta.test' }, withinMs: 0, line: 50 },
      { kind: 'delete', as: 'alice@alpha.test', status: 'p1', line: 51 },
      { kind: 'move', from: 'alice@alpha.test', to: 'alice2@beta.test', line: 52 },
    ]);
  });

  it('takes the defaults: seed 1, the clock at 2026-01-01, a network without faults', () => {
    const s = parseScenario('name: d\ninstances:\n  alpha.test:\nsteps: []\n', 'd.yaml');
    expect(s.seed).toBe(1);
    expect(s.start.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(s.network).toEqual({
      defaults: { latencyMs: 0, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0, errors: {}, slowMs: 0, down: false },
      links: [],
    });
  });
});

describe('durations', () => {
  it('read every unit, decimals and plain milliseconds', () => {
    expect([parseDuration('250ms'), parseDuration('30s'), parseDuration('10m'), parseDuration('2h'), parseDuration('7d')]).toEqual([
      250, 30_000, 600_000, 7_200_000, 604_800_000,
    ]);
    expect([parseDuration('8.6s'), parseDuration('0.96s'), parseDuration(1500), parseDuration(0)]).toEqual([8600, 960, 1500, 0]);
    expect([parseDuration('10 minutes'), parseDuration('-1s'), parseDuration(-5), parseDuration('1h30m')]).toEqual([null, null, null, null]);
  });
});

describe('a bad scenario fails before anything runs, naming the line and the reason', () => {
  it('malformed YAML: the parser line', () => {
    // The parser notices the unclosed map where the next key starts.
    expect(problems('name: t\ninstances:\n  alpha.test: {\nsteps: []\n')[0]).toBe(
      '4: malformed YAML: Flow map in block collection must be sufficiently indented and end with a }',
    );
    expect(problems('name: t\nname: u\ninstances: {}\nsteps: []\n')).toEqual(['2: malformed YAML: Map keys must be unique']);
  });

  it('an unknown step, with the nearest known one', () => {
    expect(problems(withSteps('folow: { as: bob@beta.test, target: alice@alpha.test }', 'expectt: { }', 'teleport: alpha.test'))).toEqual([
      '13: unknown step "folow" (did you mean follow?)',
      '14: unknown step "expectt" (did you mean expect?)',
      '15: unknown step "teleport"',
    ]);
  });

  it('an unknown instance, in a step and in an assertion', () => {
    expect(
      problems(
        withSteps(
          'domain_block: { on: alpha.test, domain: gama.test }',
          'post: { as: alice@alpha.test, text: hi, name: s1 }',
          'expect: { visible: { status: s1, on: alpha.tset } }',
          'expect: { followers: { account: alice@alpha.test, on: [alpha.test, zeta.test], count: 0 } }',
        ),
      ),
    ).toEqual([
      '13: domain_block.domain: instance gama.test is not declared',
      '15: expect.visible.on: instance alpha.tset is not declared (did you mean alpha.test?)',
      '16: expect.followers.on[1]: instance zeta.test is not declared (did you mean beta.test?)',
    ]);
  });

  it('an account on an undeclared instance', () => {
    const text = HEAD.replace('  bob@beta.test: {}\n', '  bob@beta.test: {}\n  carol@gamma.test: {}\n  dave@alpha.tst: {}\n');
    expect(problems(`${text}  - heal: {}\n`)).toEqual([
      '9: account carol@gamma.test: instance gamma.test is not declared',
      '10: account dave@alpha.tst: instance alpha.tst is not declared (did you mean alpha.test?)',
    ]);
  });

  it('a step or an assertion naming an account not declared', () => {
    expect(
      problems(
        withSteps(
          'follow: { as: bob@beta.test, target: alice@alpha.tes }',
          'post: { as: carol@alpha.test, text: hi }',
          'post: { as: alice@alpha.test, text: hi, name: s1 }',
          'expect: { visible: { status: s1, on: beta.test, viewer: bobby@beta.test } }',
          'expect: { following: { account: bob@beta.test, target: zed@alpha.test, on: beta.test } }',
        ),
      ),
    ).toEqual([
      '13: follow.target: account alice@alpha.tes is not declared (did you mean alice@alpha.test?)',
      '14: post.as: account carol@alpha.test is not declared',
      '16: expect.visible.viewer: account bobby@beta.test is not declared (did you mean bob@beta.test?)',
      '17: expect.following.target: account zed@alpha.test is not declared',
    ]);
  });

  it('a status name not defined by an earlier step, or defined twice', () => {
    expect(
      problems(
        withSteps(
          'like: { as: bob@beta.test, status: p1 }',
          'post: { as: alice@alpha.test, text: one, name: p1 }',
          'post: { as: alice@alpha.test, text: two, name: p1 }',
          'boost: { as: bob@beta.test, status: p2 }',
          'expect: { thread: { status: q1, on: alpha.test, replies: 0 } }',
        ),
      ),
    ).toEqual([
      '13: like.status: status p1 is named only later (line 14)',
      '15: post.name: status name p1 is already used (line 14)',
      '16: boost.status: status p2 is not named by an earlier step (did you mean p1?)',
      '17: expect.thread.status: status q1 is not named by an earlier step (did you mean p1?)',
    ]);
  });

  it('a vote on a status that is not a poll, and choices out of range', () => {
    expect(
      problems(
        withSteps(
          'post: { as: alice@alpha.test, text: plain, name: s1 }',
          'post: { as: alice@alpha.test, text: "Tea?", name: p1, poll: { options: [yes, no], expires_in: 1h } }',
          'vote: { as: bob@beta.test, poll: s1, choices: [0] }',
          'vote: { as: bob@beta.test, poll: p1, choices: [2] }',
          'vote: { as: bob@beta.test, poll: p1, choices: [0, 1] }',
          'expect: { poll: { status: p1, on: alpha.test, votes: [1, 0, 0] } }',
        ),
      ),
    ).toEqual([
      '15: vote.poll: status s1 is not a poll (line 13)',
      '16: vote.choices: 2 out of range, poll p1 has 2 options (0 to 1)',
      '17: vote.choices: poll p1 takes one choice, not 2',
      '17: vote: bob@beta.test has already voted on p1',
      '18: poll.votes: 3 tallies for a poll of 2 options',
    ]);
  });

  it('a bad duration, wherever one goes', () => {
    const text = HEAD.replace('latency: 100ms', 'latency: fast') + [
      '  - advance: 10 minutes',
      '  - post: { as: alice@alpha.test, text: "?", name: p1, poll: { options: [a, b], expires_in: 1 hour } }',
      '  - expect: { visible: { status: p1, on: beta.test }, within: soon }',
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      '11: network.latency: bad duration "fast" (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)',
      '13: advance: bad duration "10 minutes" (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)',
      '14: post.poll.expires_in: bad duration "1 hour" (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)',
      '15: expect.within: bad duration "soon" (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)',
    ]);
  });

  it('a crash of an instance already down, a restart of one that is up, a step on a crashed one', () => {
    expect(
      problems(
        withSteps(
          'restart: alpha.test',
          'crash: beta.test',
          'crash: beta.test',
          'post: { as: bob@beta.test, text: hi }',
          'restart: beta.test',
          'post: { as: bob@beta.test, text: hi }',
        ),
      ),
    ).toEqual([
      '13: restart: alpha.test is running (no crash before this step)',
      '15: crash: beta.test is already down (crashed at line 14)',
      '16: post.as: beta.test is down (crashed at line 14)',
    ]);
  });

  it('a partition naming an unknown host, or one host twice', () => {
    expect(problems(withSteps('partition: [[alpha.test], [beta.test, gamma.test]]', 'partition: [[alpha.test, beta.test], [beta.test], ["zz*.test"]]'))).toEqual([
      '13: partition[1][1]: instance gamma.test is not declared',
      '14: partition: beta.test is in two groups',
      '14: partition[2][0]: pattern zz*.test matches no instance',
    ]);
  });

  it("an account on a light peer doing what peers cannot, and a peer's Roost-only settings", () => {
    const text = HEAD.replace('peer1.test: { software: mastodon }', 'peer1.test: { software: mastodon, authorized_fetch: true }');
    expect(
      problems(
        text +
          [
            '  - post: { as: pete@peer1.test, text: "?", name: p1, poll: { options: [a, b], expires_in: 1h } }',
            '  - vote: { as: pete@peer1.test, poll: p1, choices: [0] }',
            '  - follow: { as: pete@peer1.test, target: alice@alpha.test }',
            '  - domain_block: { on: peer1.test, domain: alpha.test }',
            '',
          ].join('\n'),
      ),
    ).toEqual([
      '5: instance peer1.test: authorized_fetch is for full Roost instances, and peer1.test is a light mastodon peer',
      '14: vote: pete@peer1.test is on a light mastodon peer, whose accounts can only post, reply, follow, like and boost',
      '16: domain_block.on: peer1.test is a light mastodon peer; only a Roost instance takes a domain block',
    ]);
  });

  it('schema problems: fields unknown, missing, mistyped, out of range', () => {
    const text = `name: t
instances:
  alpha.test: { registration: open }
  Alpha_Test: {}
accounts:
  alice@alpha.test: { locked: yes }
network:
  loss: 1.5
  errors: { 418: 0.1 }
steps:
  - post: { as: alice@alpha.test, txt: hi, visibility: everyone }
  - expect: { within: 1m }
  - post: { as: alice@alpha.test, text: hi }
    name: p1
  -
`;
    expect(problems(text)).toEqual([
      '3: instance alpha.test: unknown field "registration" (did you mean registrations?)',
      '4: instance name "Alpha_Test" is not a host name such as alpha.test',
      '6: account alice@alpha.test locked: must be true or false',
      '8: network.loss: must be at most 1',
      '9: network.errors: 418 is not one of 404, 410, 429, 500, 502, 503',
      '11: post: missing "text"',
      '11: post: unknown field "txt" (did you mean text?)',
      '11: post.visibility: "everyone" is not one of public, unlisted, private, direct',
      '12: expect: needs one of visible, not_visible, followers, poll, thread, following',
      "13: a step is one name and its value, this one has post, name (indent the fields under the step's name)",
      '15: a step must be a map such as "follow: { as: …, target: … }"',
    ]);
  });

  it('lists every problem of a file at once, in line order, in the error message too', () => {
    let error: unknown;
    try {
      parseScenario(
        withSteps('folow: { as: bob@beta.test, target: alice@alpha.test }', 'advance: 1 week', 'crash: gamma.test', 'like: { as: bob@beta.test, status: nope }'),
        'many.yaml',
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as ScenarioError).file).toBe('many.yaml');
    expect((error as ScenarioError).message).toBe(
      [
        'many.yaml:13: unknown step "folow" (did you mean follow?)',
        'many.yaml:14: advance: bad duration "1 week" (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)',
        'many.yaml:15: crash: instance gamma.test is not declared',
        'many.yaml:16: like.status: status nope is not named by an earlier step',
      ].join('\n'),
    );
  });

  it('link rules: patterns expand and down_fraction picks hosts, in network.links and in link steps alike', () => {
    const text = HEAD.replace(
      '  latency: 100ms\n',
      '  latency: 100ms\n  links:\n    - { from: "*", to: "nope*.test", loss: 0.1 }\n    - { from: alpha.test, to: "*.test", latency_distribution: { kind: lognormal, mean: 1s, min: 2s, max: 3s } }\n',
    );
    expect(problems(text + '  - link: { from: alpha.test, to: "nope*.test", loss: 0.5 }\n  - link: { from: "*", to: beta.test, down_fraction: 0.5 }\n')).toEqual([
      '13: network.links[0].to: pattern nope*.test matches no instance',
      '14: network.links[1].latency_distribution: needs min ≤ mean ≤ max',
      '16: link.to: pattern nope*.test matches no instance',
    ]);
    const step = parseScenario(`${HEAD}  - link: { from: "*", to: "*a.test", down_fraction: 1 }\n`, 'down.yaml').steps.at(-1);
    expect(step).toEqual({
      kind: 'link',
      rules: [
        { from: '*', to: 'alpha.test', down: true, line: 13 },
        { from: '*', to: 'beta.test', down: true, line: 13 },
      ],
      line: 13,
    });
    const ok = parseScenario(`${HEAD.replace('  latency: 100ms\n', '  latency: 100ms\n  links:\n    - { from: "*", to: "*a.test", loss: 0.2 }\n')}  - heal:\n`, 'ok.yaml');
    expect(ok.network.links).toEqual([
      { from: '*', to: 'alpha.test', loss: 0.2, line: 13 },
      { from: '*', to: 'beta.test', loss: 0.2, line: 13 },
    ]);
  });

  it('peers: generated names may not collide with declared ones', () => {
    const text = `${HEAD.replace('network:', 'peers:\n  - generate: { pattern: "peer{n}.test", count: 2, software: gotosocial }\nnetwork:')}  - heal:\n`;
    expect(problems(text)).toEqual(['11: peers: peer1.test is already declared (line 5)']);
    const ok = parseScenario(text.replace('count: 2', 'count: 2, first: 2'), 'ok.yaml');
    expect(ok.instances.slice(3).map((i) => [i.name, i.software, i.line])).toEqual([
      ['peer2.test', 'gotosocial', 11],
      ['peer3.test', 'gotosocial', 11],
    ]);
  });
});

describe('the JSON Schema', () => {
  it('is valid draft 2020-12 and compiles with the parser’s options', () => {
    const schema = JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
    const ajv = new Ajv2020(AJV_OPTIONS);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(typeof ajv.compile(schema)).toBe('function');
  });
});
