/**
 * `npm run bench -- actors`: how fast Roost restores persisted actors, and what an idle actor
 * costs in memory, next to plain xstate in the same run.
 *
 * Restores, for 10,000 poll actors and 10,000 follow actors in varied states, each from the JSON
 * text its row holds (polls.machine / follows.machine):
 *   Roost     JSON.parse + upgradeSnapshot (definition check) + restore (actors/runtime/step.ts),
 *             what the actor store does before each step
 *   baseline  JSON.parse + xstate's own `createActor(machine, { snapshot })` from the snapshot
 *             xstate persisted (getPersistedSnapshot) for the same state
 * and the same with one event stepped and the result persisted (Roost's pure `step`; xstate:
 * createActor + start + send + getPersistedSnapshot + stop). Prints restores per second and p99
 * per restore, as ratios (goal: Roost ≥ 0.5× the baseline).
 *
 * Memory: the heap after 10,000 actors each restored, stepped with a vote and written back (as
 * the store does, the written text dropped as a database would take it), next to 10,000 plain
 * xstate actors kept started and idle, as a server with resident actors would hold them. Roost
 * holds no actor between events, so its growth is ~0 per actor.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createActor, type AnyStateMachine } from 'xstate';
import { create, restore, step, type PersistedSnapshot } from '../../actors/runtime/step.ts';
import { stampSnapshot, upgradeSnapshot, type MachineDefinition } from '../../actors/runtime/definition.ts';
import { pollDefinition, pollMachine } from '../../actors/poll/poll.machine.ts';
import { followDefinition, followMachine } from '../../actors/follow/follow.machine.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const N = Number(process.env.BENCH_ACTORS ?? 10_000);
const NOW = '2026-06-01T12:00:00.000Z';
const LATER = '2026-06-02T12:00:00.000Z';

interface Rows {
  kind: string;
  definition: MachineDefinition<AnyStateMachine>;
  machine: AnyStateMachine;
  /** Roost's stored snapshots (the rows' text). */
  roost: string[];
  /** xstate's persisted snapshots of the same states. */
  xstate: string[];
  /** An event each row's actor accepts. */
  events: { type: string }[];
}

function xstateText(machine: AnyStateMachine, s: PersistedSnapshot<unknown>): string {
  const actor = createActor(machine, { snapshot: machine.resolveState({ value: s.value, context: s.context as never }) });
  return JSON.stringify(actor.getPersistedSnapshot());
}

function pollRows(): Rows {
  const roost: string[] = [];
  const xs: string[] = [];
  const events: { type: string }[] = [];
  for (let i = 0; i < N; i++) {
    let s = create(pollMachine, {
      pollId: String(1e15 + i), local: i % 4 !== 0, options: ['a', 'b', 'c', 'd'].slice(0, 2 + (i % 3)), multiple: i % 2 === 0,
      hideTotals: i % 5 === 0, expiresAt: LATER, authorId: String(2e15 + i),
    }).snapshot;
    for (let v = 0; v < i % 7; v++) {
      const r = step(pollMachine, s, { type: 'poll.vote', voterId: `v${v}`, choices: [0], now: NOW, local: true });
      if (r.accepted) s = r.snapshot;
    }
    roost.push(JSON.stringify(stampSnapshot(pollDefinition, s)));
    xs.push(xstateText(pollMachine, s));
    events.push({ type: 'poll.vote', voterId: 'next', choices: [1], now: NOW, local: true } as never);
  }
  return { kind: 'poll', definition: pollDefinition as never, machine: pollMachine, roost, xstate: xs, events };
}

function followRows(): Rows {
  const roost: string[] = [];
  const xs: string[] = [];
  const events: { type: string }[] = [];
  for (let i = 0; i < N; i++) {
    const facts = { targetLocked: i % 3 === 0, targetRemote: i % 5 === 0, requesterSilenced: false, requesterMutedByTarget: false };
    const r = step(followMachine, undefined, { type: 'follow.request', ...facts }, { followerId: String(3e15 + i), targetId: String(4e15 + i) });
    if (!r.accepted) throw new Error('follow.request refused');
    roost.push(JSON.stringify(stampSnapshot(followDefinition, r.snapshot)));
    xs.push(xstateText(followMachine, r.snapshot));
    events.push({ type: 'follow.update', options: { notify: true } } as never);
  }
  return { kind: 'follow', definition: followDefinition as never, machine: followMachine, roost, xstate: xs, events };
}

/** Runs fn over every row, timing each; returns per-second rate and p99 in ms. */
function measure(rows: number, fn: (i: number) => void): { rate: number; p99: number } {
  for (let i = 0; i < Math.min(rows, 2000); i++) fn(i); // warm-up
  const times = new Float64Array(rows);
  const t0 = performance.now();
  for (let i = 0; i < rows; i++) {
    const t = performance.now();
    fn(i);
    times[i] = performance.now() - t;
  }
  const elapsed = performance.now() - t0;
  times.sort();
  return { rate: (rows / elapsed) * 1000, p99: times[Math.floor(rows * 0.99)]! };
}

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

export async function main(): Promise<number> {
  const sets = [pollRows(), followRows()];
  const out: string[][] = [];
  let worst = Infinity;
  for (const r of sets) {
    const ours = measure(N, (i) => {
      restore(r.machine, upgradeSnapshot(r.definition, JSON.parse(r.roost[i]!)));
    });
    const plain = measure(N, (i) => {
      createActor(r.machine, { snapshot: JSON.parse(r.xstate[i]!) }).getSnapshot();
    });
    const oursStep = measure(N, (i) => {
      const s = step(r.machine, upgradeSnapshot(r.definition, JSON.parse(r.roost[i]!)), r.events[i] as never);
      JSON.stringify(stampSnapshot(r.definition, s.snapshot));
    });
    const plainStep = measure(N, (i) => {
      const actor = createActor(r.machine, { snapshot: JSON.parse(r.xstate[i]!) }).start();
      actor.send(r.events[i] as never);
      JSON.stringify(actor.getPersistedSnapshot());
      actor.stop();
    });
    worst = Math.min(worst, ours.rate / plain.rate, oursStep.rate / plainStep.rate);
    out.push(
      [`${r.kind}: restore, xstate createActor (baseline)`, fmtInt(plain.rate), fmtMs(plain.p99), ''],
      [`${r.kind}: restore, Roost (upgrade + restore)`, fmtInt(ours.rate), fmtMs(ours.p99), fmtRatio(ours.rate / plain.rate)],
      [`${r.kind}: restore + 1 event + persist, xstate actor (baseline)`, fmtInt(plainStep.rate), fmtMs(plainStep.p99), ''],
      [`${r.kind}: restore + 1 event + persist, Roost step`, fmtInt(oursStep.rate), fmtMs(oursStep.p99), fmtRatio(oursStep.rate / plainStep.rate)],
    );
  }
  console.log(`${fmtInt(N)} actors of each kind, restored from their rows' JSON, one thread\n`);
  console.log(table(['what', 'per second', 'p99', 'vs baseline'], out));
  console.log(`\nworst Roost / xstate ratio: ${fmtRatio(worst)} (goal >= 0.50x: ${worst >= 0.5 ? 'met' : 'MISSED'})`);

  // Memory: Roost between events vs resident xstate actors.
  const polls = sets[0]!;
  let written = 0;
  const before = heapMb();
  for (let i = 0; i < N; i++) {
    const s = step(pollMachine, upgradeSnapshot(pollDefinition, JSON.parse(polls.roost[i]!)), polls.events[i] as never);
    written += JSON.stringify(stampSnapshot(pollDefinition, s.snapshot)).length; // handed to the database
  }
  const afterRoost = heapMb();
  const resident = new Map<number, ReturnType<typeof createActor>>();
  const beforeResident = heapMb();
  for (let i = 0; i < N; i++) resident.set(i, createActor(pollMachine as AnyStateMachine, { snapshot: JSON.parse(polls.xstate[i]!) }).start());
  const afterResident = heapMb();
  const perRoost = ((afterRoost - before) * 1024 * 1024) / N;
  const perResident = ((afterResident - beforeResident) * 1024 * 1024) / N;
  console.log(`\nmemory per idle poll actor (heap after GC, ${fmtInt(N)} actors; ${fmtInt(written)} bytes of snapshots written):`);
  console.log(
    table(
      ['what', 'live actors', 'heap growth', 'per actor'],
      [
        ['resident xstate actors, started and idle (baseline)', fmtInt(resident.size), `${(afterResident - beforeResident).toFixed(2)} MB`, `${fmtInt(perResident)} B`],
        ['Roost: restored, stepped, written, dropped', '0', `${(afterRoost - before).toFixed(2)} MB`, `${fmtInt(Math.max(0, perRoost))} B`],
      ],
    ),
  );
  for (const a of resident.values()) a.stop();
  console.log(`\nnothing resident between events: ${perRoost < 64 ? 'met' : 'MISSED'} (heap change ${perRoost.toFixed(1)} B per actor: no growth; the resident baseline holds ${fmtInt(perResident)} B each)`);
  return 0;
}
