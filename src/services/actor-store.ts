/**
 * The actor store: the one way a lifecycle's row changes (DESIGN "step, persist, then act").
 *
 * `stepActor(services, table, key, event, { origin })`, in one transaction (the caller's, or its
 * own):
 *   1. lock the actor's row (`select … for no key update`: a step never changes the row's key,
 *      and the stronger FOR UPDATE would wait on the KEY SHARE locks that foreign-key checks of
 *      child rows take — a vote row inserted earlier in a concurrent voter's transaction — and
 *      deadlock concurrent votes; none yet: the insert below races on the
 *      table's unique key instead);
 *   2. restore the stored snapshot, migrated when an older machine definition wrote it (with
 *      the facts the table reads off the row for that, `migrationFacts`; a row
 *      from before its actor is seeded from its columns by the table's `seed`);
 *   3. step the machine purely (actors/runtime/step.ts);
 *   4. write with a version check: `update … where id = $ and machine_version = $previous`, or
 *      `insert … on conflict do nothing`. Zero rows means another transaction got there first:
 *      read again and re-step (the lock then waits for it), up to three times, then a clean 409;
 *      never a silent overwrite;
 *   5. project the state columns from the new snapshot (the store is their only writer) and
 *      store the snapshot with its definition version;
 *   6. write every event the machine emitted to the outbox with the actor's kind, id, version
 *      and the step's origin (src/events/outbox.ts); effects/ acts on them after commit;
 *   7. schedule and cancel the timers those events ask for, as the table declares them
 *      (`timers`: a poll's close, a scheduled status's publication), in the same transaction.
 *
 * With `oneStatement`, a hot actor's step (a poll's vote) is first tried as ONE statement without
 * a transaction (see stepActorInOneStatement), and takes the path above only when that does not
 * apply. `createActor` writes a new row with its initial snapshot, events and timers, for
 * lifecycles whose row is created with something else (a poll with its status).
 *
 * A lifecycle plugs in with an `ActorTable`: its kind, table, how to find the row of a key, the
 * machine definition, the columns a snapshot projects, (when steps may create the row) the
 * columns of a new row, and the timers its events ask for. See FOLLOW_TABLE (services/follows.ts),
 * ACCOUNT_TABLE (services/account-actor.ts) and POLL_TABLE (services/polls.ts). Rows are written
 * with plain SQL (one statement each) and handed back as entities merged into the caller's
 * EntityManager.
 */
import type { EntityManager, EntityName } from '@mikro-orm/core';
import type { AnyStateMachine, EmittedFrom, EventFromLogic, InputFrom } from 'xstate';
import type { Services } from '../context.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { prepared } from '../db/prepared.ts';
import { RoostError } from '../lib/errors.ts';
import { create, step, type PersistedSnapshot, type PersistedSnapshotOf, type Rejection } from '../../actors/runtime/step.ts';
import { stampSnapshot, upgradeSnapshot, type MachineDefinition, type StoredSnapshot } from '../../actors/runtime/definition.ts';
import { outboxCtes, writeOutbox, type Origin, type OutboxEvent } from '../events/outbox.ts';
import { cancelTimers, scheduleTimer, type TimerEvent } from '../events/timers.ts';

export type { Origin } from '../events/outbox.ts';

/** A row as the database returns it (snake_case columns). */
export type RawRow = Record<string, unknown> & { id: unknown; machine: unknown; machine_version: unknown };

export interface ProjectContext<K, X> {
  services: Services;
  key: K;
  now: Date;
  /** The row before the step (null when the step creates it). */
  row: RawRow | null;
  /** The snapshot before the step (undefined when there was none). */
  previous: PersistedSnapshot<unknown> | undefined;
  event: { type: string };
  /** What the caller passed along for this table (a Follow activity's URI, say). */
  extra: X;
  /** The id of the row (a new one when the step creates it). */
  id: string;
}

/** What an emitted event asks of the timers: one scheduled (named by its dedupe key), or some dropped. */
export type TimerChange = { schedule: TimerEvent; runAt: Date; key: string } | { cancel: readonly string[] };

/** Per type of event the machine emits, the timers it asks for (applied in order, in the step's transaction). */
export type TimerDeclarations<M extends AnyStateMachine> = {
  [T in EmittedFrom<M>['type']]?: (event: Extract<EmittedFrom<M>, { type: T }>) => readonly TimerChange[];
};

export interface ActorTable<M extends AnyStateMachine, K, R extends object, X = undefined> {
  /** The actor kind written to the outbox (`follow`, `account`, later `poll`, `status` …). */
  kind: string;
  table: string;
  entity: EntityName<R>;
  definition: MachineDefinition<M>;
  /** What to read of the row when locking it (default `*`): extra facts the seed needs. */
  select?: string;
  /** The WHERE clause (with $1… params) that finds the row of `key`. */
  locate(key: K): { where: string; params: unknown[] };
  input(key: K): InputFrom<M>;
  /** What the definition's migrate hook needs from the row besides the stored snapshot. */
  migrationFacts?(row: RawRow): unknown;
  /** The snapshot a row's columns stand for, for rows written before their actor existed. */
  seed?(row: RawRow): PersistedSnapshot<unknown>;
  /** The columns of a new row besides the projected ones. Without it, a missing row is a 404. */
  insert?(ctx: ProjectContext<K, X>): Record<string, unknown>;
  /** The state columns of the row, from the snapshot after the step. */
  project(snapshot: PersistedSnapshotOf<M>, ctx: ProjectContext<K, X>): Record<string, unknown>;
  /** Column casts for the SQL (e.g. `{ languages: 'text[]' }`); machine is always jsonb. */
  casts?: Record<string, string>;
  /** State that lives in another table (e.g. users.disabled), written in the same transaction. */
  projectElsewhere?(sql: Sql, snapshot: PersistedSnapshotOf<M>, ctx: ProjectContext<K, X>): Promise<void>;
  /** The timers the emitted events ask for (services/timers.ts steps them back in when due). */
  timers?: TimerDeclarations<M>;
}

/** The timer changes an event asks for under the table's declaration (none: no declaration for its type). */
function timerChanges<M extends AnyStateMachine>(table: { timers?: TimerDeclarations<M> }, event: OutboxEvent): readonly TimerChange[] | undefined {
  const declared = table.timers as Record<string, ((e: OutboxEvent) => readonly TimerChange[]) | undefined> | undefined;
  return declared?.[event.type]?.(event);
}

/** Schedules and cancels the timers the emitted events ask for, in the caller's transaction. */
async function applyTimers<M extends AnyStateMachine>(services: Services, sql: Sql, table: { timers?: TimerDeclarations<M> }, emitted: readonly OutboxEvent[]): Promise<void> {
  for (const e of emitted) {
    for (const change of timerChanges(table, e) ?? []) {
      if ('cancel' in change) await cancelTimers(sql, change.cancel);
      else await scheduleTimer(sql, change.schedule, { runAt: change.runAt, dedupeKey: change.key, clock: services.clock });
    }
  }
}

export interface StepActorOptions<X> {
  origin: Origin;
  /** Join this transaction instead of opening one. */
  em?: EntityManager;
  extra?: X;
}

/**
 * A step tried first as one statement (stepActorInOneStatement), for a hot actor. The event is
 * then built from the row read, with the `read` columns; when the one statement does not apply,
 * the step's own event (or event function) is stepped on the transactional path.
 */
export interface OneStatement<M extends AnyStateMachine> {
  event(row: RawRow): EventFromLogic<M>;
  /** Whether the one statement fits the row read (false: the locking path steps it instead, e.g. a voter adding to an earlier vote). */
  applies?(row: RawRow): boolean;
  /** More of a select list read with the row (e.g. whether a voter has voted); its params are numbered from $1 and renumbered after the table's. */
  read?: { columns: string; params: unknown[] };
  /**
   * A data-modifying statement written with the step, only when the actor's row is: it selects
   * from the CTE `written` (the actor's row, column `id`). Params numbered from $1, renumbered
   * here. If it fails (a unique key taken meanwhile), nothing of the step is written and the
   * read and step run again.
   */
  alsoWrite?: { sql: string; params: unknown[] };
  /**
   * Guess the row instead of reading it first: the row this process last wrote for the actor
   * (see {@link rowGuesses}), with `assume` standing for the `read` columns (e.g. `{ voted: false }`).
   * A wrong guess writes nothing — the version check finds no row, or `alsoWrite`'s unique key
   * refuses (a voter who has voted) — and the guess is dropped for a real read; a guess the
   * machine refuses is read again too, so a refusal always comes from the stored row.
   */
  optimistic?: { assume: Record<string, unknown> };
}

/**
 * The event of a transactional step: the event itself, or a function that first writes what must
 * come before the step in its transaction (a vote's row, before the poll's lock) and returns it;
 * in stepActor's own transaction, what it wrote is rolled back when the step is refused.
 */
export type StepEvent<M extends AnyStateMachine> = EventFromLogic<M> | ((sql: Sql) => Promise<EventFromLogic<M>>);

export type StepActorResult<M extends AnyStateMachine, R> =
  | {
      accepted: true;
      row: R;
      snapshot: PersistedSnapshotOf<M>;
      version: number;
      previous: PersistedSnapshot<unknown> | undefined;
      emitted: OutboxEvent[];
    }
  | {
      accepted: false;
      /** The row as it is (null when there is none). */
      row: R | null;
      snapshot: PersistedSnapshotOf<M>;
      version: number;
      previous: PersistedSnapshot<unknown> | undefined;
      rejection: Rejection;
      emitted: [];
    };

const MAX_ATTEMPTS = 3;

/**
 * Steps the actor of `key` with `event`, persisting row, snapshot, events and timers in one
 * transaction; with `oneStatement`, in one statement when it applies (the accepted result then
 * has no row: it is not read back).
 */
export async function stepActor<M extends AnyStateMachine, K, R extends object>(
  services: Services,
  table: ActorTable<M, K, R, undefined>,
  key: K,
  event: StepEvent<M>,
  opts: StepActorOptions<undefined> & { oneStatement: OneStatement<M> },
): Promise<OneStatementStepResult<M, R>>;
export async function stepActor<M extends AnyStateMachine, K, R extends object, X = undefined>(
  services: Services,
  table: ActorTable<M, K, R, X>,
  key: K,
  event: StepEvent<M>,
  opts: StepActorOptions<X>,
): Promise<StepActorResult<M, R>>;
export async function stepActor<M extends AnyStateMachine, K, R extends object, X = undefined>(
  services: Services,
  table: ActorTable<M, K, R, X>,
  key: K,
  event: StepEvent<M>,
  opts: StepActorOptions<X> & { oneStatement?: OneStatement<M> },
): Promise<OneStatementStepResult<M, R>> {
  if (opts.oneStatement && !opts.em) {
    const r = await stepActorInOneStatement(services, table as ActorTable<M, K, R, undefined>, key, opts.oneStatement, opts.origin);
    if (r) return r;
  }
  const run = async (tx: EntityManager): Promise<StepActorResult<M, R>> => {
    const sql = sqlFromEm(tx);
    const ev = typeof event === 'function' ? await (event as (sql: Sql) => Promise<EventFromLogic<M>>)(sql) : event;
    const { where, params } = table.locate(key);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [row] = await sql.query<RawRow>(`select ${table.select ?? '*'} from ${table.table} where ${where} for no key update of ${table.table}`, params);
      if (!row && !table.insert) throw new RoostError(404, 'Record not found');
      const stored = (row?.machine as StoredSnapshot | null | undefined) ?? (row && table.seed ? table.seed(row) : undefined);
      const previous = stored ? upgradeSnapshot(table.definition, stored, row && table.migrationFacts ? table.migrationFacts(row) : undefined) : undefined;
      const r = step(table.definition.machine, previous, ev, table.input(key));
      if (!r.accepted) {
        return {
          accepted: false,
          row: row ? tx.map(table.entity, row as never) : null,
          snapshot: r.snapshot,
          version: r.version,
          previous,
          rejection: r.rejection,
          emitted: [],
        };
      }
      const now = services.clock.now();
      const ctx: ProjectContext<K, X> = {
        services,
        key,
        now,
        row: row ?? null,
        previous,
        event: ev,
        extra: opts.extra as X,
        id: row ? String(row.id) : services.ids.next(),
      };
      const { names, values, cast } = rowColumns(table, r.snapshot, r.version, ctx, row ? {} : table.insert!(ctx));
      const written = row
        ? await sql.query<RawRow>(
            `update ${table.table} set ${names.map((n, i) => `${n} = $${i + 1}${cast(n)}`).join(', ')}
              where id = $${names.length + 1} and machine_version = $${names.length + 2} returning *`,
            [...values, row.id, r.previousVersion],
          )
        : await sql.query<RawRow>(
            `insert into ${table.table} (${names.join(', ')}) values (${names.map((n, i) => `$${i + 1}${cast(n)}`).join(', ')})
              on conflict do nothing returning *`,
            values,
          );
      if (written.length === 0) continue; // lost the race: read the winner's row and step again
      await table.projectElsewhere?.(sql, r.snapshot, ctx);
      await writeOutbox(sql, {
        actorKind: table.kind,
        actorId: ctx.id,
        actorVersion: r.version,
        origin: opts.origin,
        events: r.emitted as OutboxEvent[],
        now,
      });
      await applyTimers(services, sql, table, r.emitted as OutboxEvent[]);
      return {
        accepted: true,
        row: tx.map(table.entity, written[0] as never),
        snapshot: r.snapshot,
        version: r.version,
        previous,
        emitted: r.emitted as OutboxEvent[],
      };
    }
    throw new RoostError(409, 'The record changed meanwhile; try again');
  };
  if (opts.em) return run(opts.em);
  if (typeof event !== 'function') return services.db.em().transactional(run);
  // In its own transaction, a refused step commits nothing of what the event function wrote.
  try {
    return await services.db.em().transactional(async (tx) => {
      const r = await run(tx);
      if (!r.accepted) throw new Refused(r);
      return r;
    });
  } catch (e) {
    if (e instanceof Refused) return e.result as StepActorResult<M, R>;
    throw e;
  }
}

/** Rolls stepActor's own transaction back on a refusal, carrying the refusal out. */
class Refused extends Error {
  readonly result: unknown;
  constructor(result: unknown) {
    super('refused');
    this.result = result;
  }
}

/**
 * Creates the actor of a new row in the caller's transaction (pass its Sql), for a lifecycle
 * whose row is made with something else (a poll with its status): the row with `columns`, the
 * projected ones and the initial snapshot (version 0), the events of creation in the outbox and
 * the timers they ask for. `id` is the row's (default: the key).
 */
export async function createActor<M extends AnyStateMachine, K, R extends object, X = undefined>(
  services: Services,
  sql: Sql,
  table: ActorTable<M, K, R, X>,
  key: K,
  opts: { input: InputFrom<M>; columns: Record<string, unknown>; origin: Origin; id?: string },
): Promise<{ id: string; snapshot: PersistedSnapshotOf<M>; emitted: OutboxEvent[] }> {
  const id = opts.id ?? String(key);
  const now = services.clock.now();
  const created = create(table.definition.machine, opts.input);
  const ctx: ProjectContext<K, X> = { services, key, now, row: null, previous: undefined, event: { type: 'xstate.init' }, extra: undefined as X, id };
  const { names, values, cast } = rowColumns(table, created.snapshot, created.snapshot.version, ctx, { id, ...opts.columns, created_at: now });
  await sql.query(`insert into ${table.table} (${names.join(', ')}) values (${names.map((n, i) => `$${i + 1}${cast(n)}`).join(', ')})`, values);
  const emitted = created.emitted as OutboxEvent[];
  await writeOutbox(sql, { actorKind: table.kind, actorId: id, actorVersion: created.snapshot.version, origin: opts.origin, events: emitted, now });
  await applyTimers(services, sql, table, emitted);
  return { id, snapshot: created.snapshot, emitted };
}

/** The columns a step writes (a new row's own, projected state, snapshot, version), with their SQL casts. */
function rowColumns<M extends AnyStateMachine, K, R extends object, X>(
  table: ActorTable<M, K, R, X>,
  snapshot: PersistedSnapshotOf<M>,
  version: number,
  ctx: ProjectContext<K, X>,
  own: Record<string, unknown>,
): { names: string[]; values: unknown[]; cast: (column: string) => string; columns: Record<string, unknown>; machine: unknown } {
  const machine = stampSnapshot(table.definition, snapshot);
  const columns: Record<string, unknown> = {
    ...own,
    ...table.project(snapshot, ctx),
    machine: JSON.stringify(machine),
    machine_version: version,
  };
  const names = Object.keys(columns);
  return {
    columns,
    machine,
    names,
    values: names.map((n) => columns[n]),
    cast: (n) => (n === 'machine' ? '::jsonb' : table.casts?.[n] ? `::${table.casts[n]}` : ''),
  };
}

/** A one-statement step's result: as stepActor's, without the row when accepted (it is not read back). */
export type OneStatementStepResult<M extends AnyStateMachine, R> =
  | Omit<Extract<StepActorResult<M, R>, { accepted: true }>, 'row'>
  | Extract<StepActorResult<M, R>, { accepted: false }>;

/**
 * The last row written by the one-statement path, per actor, per instance: a bounded cache of
 * rows (at most ROW_GUESSES_MAX; not running actors — nothing runs between events), read only as
 * a guess that the version check guards. A hot actor (a poll taking thousands of votes from this
 * process) then costs one statement per step instead of a read and a statement.
 */
const rowGuesses = new WeakMap<Services, Map<string, RawRow>>();
export const ROW_GUESSES_MAX = 1_000;

function guessesOf(services: Services): Map<string, RawRow> {
  let m = rowGuesses.get(services);
  if (!m) rowGuesses.set(services, (m = new Map()));
  return m;
}

/** `sql`'s $n placeholders moved up by `offset`; the few texts a hot actor uses are kept (one per text and offset). */
const renumbered = new Map<string, string>();
const renumber = (sql: string, offset: number) => {
  const key = `${offset} ${sql}`;
  let out = renumbered.get(key);
  if (out === undefined) {
    out = sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    if (renumbered.size >= 256) renumbered.clear();
    renumbered.set(key, out);
  }
  return out;
};

/**
 * The fast path for a hot actor (a poll taking thousands of votes): no explicit transaction and
 * no lock. Reads the row (plain select), steps, and writes the row with its snapshot, the caller's
 * row (`alsoWrite`) and the emitted events in ONE statement of data-modifying CTEs, atomic as any
 * single statement is. The version check is the guard: `update … where machine_version =
 * $previous` finds no row when another step got there first, then nothing else is written either
 * (every insert selects from `written`), and the read and step run again, up to three times; a
 * unique-key failure of `alsoWrite` rolls the statement back and is retried the same way. Still
 * losing after three tries (a contended actor), it returns null and stepActor takes the locking
 * path, which waits its turn instead. Two round trips instead of a transaction's six; used where
 * the step writes nothing but its row, one row of the caller's and its events. Returns null
 * (nothing written) when it does not apply: no row yet, a table with `projectElsewhere`, events
 * that ask for timers (the table's `timers`), or contention.
 * The event is built from the row read, with the `read` columns.
 */
async function stepActorInOneStatement<M extends AnyStateMachine, K, R extends object>(
  services: Services,
  table: ActorTable<M, K, R, undefined>,
  key: K,
  opts: OneStatement<M>,
  origin: Origin,
): Promise<OneStatementStepResult<M, R> | null> {
  if (table.projectElsewhere) return null;
  const sql = services.db.sql;
  const { where, params } = table.locate(key);
  const extra = opts.read ? `, ${renumber(opts.read.columns, params.length)}` : '';
  const guesses = opts.optimistic ? guessesOf(services) : null;
  const guessKey = `${table.kind}:${String(key)}`;
  let guessed = guesses?.get(guessKey);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const guess = guessed;
    guessed = undefined;
    if (guess) {
      guesses!.delete(guessKey); // kept again only if this guess proves right
      attempt--; // a guess is not one of the attempts
    }
    const [row] = guess
      ? [{ ...guess, ...opts.optimistic!.assume }]
      : await sql.query<RawRow>(prepared(`select ${table.select ?? '*'}${extra} from ${table.table} where ${where}`), [...params, ...(opts.read?.params ?? [])]);
    if (!row || (opts.applies && !opts.applies(row))) return null;
    const stored = (row.machine as StoredSnapshot | null | undefined) ?? (table.seed ? table.seed(row) : undefined);
    const previous = stored ? upgradeSnapshot(table.definition, stored, table.migrationFacts ? table.migrationFacts(row) : undefined) : undefined;
    const ev = opts.event(row);
    const r = step(table.definition.machine, previous, ev, table.input(key));
    if (!r.accepted) {
      if (guess) continue; // refused on a guess: decide on the stored row
      return { accepted: false, row: services.db.em().map(table.entity, row as never), snapshot: r.snapshot, version: r.version, previous, rejection: r.rejection, emitted: [] };
    }
    const emitted = r.emitted as OutboxEvent[];
    // Timers are scheduled in a transaction: a step that asks for one takes that path.
    if (emitted.some((e) => timerChanges(table, e))) return null;
    const now = services.clock.now();
    const ctx: ProjectContext<K, undefined> = { services, key, now, row, previous, event: ev, extra: undefined, id: String(row.id) };
    const { names, values, cast, columns, machine } = rowColumns(table, r.snapshot, r.version, ctx, {});
    const update = `written as (
       update ${table.table} set ${names.map((n, i) => `${n} = $${i + 1}${cast(n)}`).join(', ')}
        where id = $${names.length + 1} and machine_version = $${names.length + 2} returning id)`;
    const all: unknown[] = [...values, row.id, r.previousVersion];
    const ctes = [update];
    if (opts.alsoWrite) {
      ctes.push(`also as (${renumber(opts.alsoWrite.sql, all.length)})`);
      all.push(...opts.alsoWrite.params);
    }
    const o = emitted.length
      ? outboxCtes({ actorKind: table.kind, actorId: ctx.id, actorVersion: r.version, origin, events: emitted, now }, all.length + 1, 'exists (select 1 from written)')
      : null;
    if (o) {
      ctes.push(o.ctes);
      all.push(...o.params);
    }
    let written: RawRow[];
    try {
      // A hot actor's statement has one text per shape (its table, the caller's extra write, the
      // number of events): named once per connection, then sent as its parameters only.
      written = await sql.query<RawRow>(prepared(`with ${ctes.join(', ')} select written.id${o ? `, ${o.notify} as notified` : ''} from written`), all);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') continue; // alsoWrite's key was taken meanwhile: read and step again
      throw e;
    }
    if (written.length === 0) continue; // lost the race: read the winner's row and step again
    if (guesses) {
      // The row as written, without reading it back (parsing the returned row cost more than the
      // step): the columns this step wrote over the row it stepped from, the snapshot as an object
      // as PostgreSQL returns jsonb. Written columns keep the form they were sent in; a guess is
      // read for its snapshot and version, which the next statement's version check guards.
      if (guesses.size >= ROW_GUESSES_MAX) guesses.clear();
      guesses.set(guessKey, { ...row, ...columns, machine, machine_version: r.version });
    }
    return { accepted: true, snapshot: r.snapshot, version: r.version, previous, emitted };
  }
  return null; // contended: the caller's transactional path waits for the lock instead
}

/** Records a fact that is not a step of an actor (a profile edit, a block) in the outbox. */
export async function recordEvent(
  services: Services,
  sql: Sql,
  fact: { actorKind: string; actorId: string; origin: Origin; event: OutboxEvent; dedupeKey?: string },
): Promise<void> {
  await writeOutbox(sql, {
    actorKind: fact.actorKind,
    actorId: fact.actorId,
    actorVersion: null,
    origin: fact.origin,
    events: [fact.event],
    now: services.clock.now(),
    dedupeKey: fact.dedupeKey,
  });
}
