/**
 * The lab's trace: one JSON object per line (JSON Lines), one file per run, in the order the lab
 * saw things happen. Documented for people who read traces in notebooks (docs/lab.md).
 *
 * Every record has:
 * - `t`: the lab clock when it happened (ISO 8601, milliseconds) — simulated time, the same for
 *   the same seed;
 * - `kind`: what happened (below);
 * - `wall`: the wall clock (ISO 8601).
 *
 * Activities are named by their `id` (the URI) and `type`; `key` is a stable name for the
 * activity that does not depend on generated ids (its body without ids and dates, hashed).
 * Two runs of one seed give the same trace apart from `wall`, generated ids and the order of
 * records within one instant of the lab clock: `canonicalTrace` (./canonical.ts) drops those,
 * and two runs' canonical traces are equal.
 */

export type TraceRecord = { t: string; wall: string } & (
  | { kind: 'run.start'; scenario: string; seed: number; instances: { name: string; software: string }[] }
  | { kind: 'step'; line: number; step: string; ok: boolean; detail?: string }
  /** A fact committed on an instance (an outbox event of the catalogue, e.g. `status.created`). */
  | { kind: 'event'; instance: string; event: string }
  /** An activity queued for delivery on an instance (`inboxes`: how many, or `followers` when expanded later). */
  | { kind: 'queued'; instance: string; id: string; type: string; inboxes: number | 'followers' }
  /** An activity left an instance's delivery lane, signed for `to` (one per inbox host per attempt). */
  | {
      kind: 'delivery';
      from: string;
      to: string;
      inbox: string;
      id: string | null;
      key: string;
      type: string;
      /** `delivered` (2xx), `http-error` (the status), `lost`, `partitioned`, `down`, `duplicated` (a second copy delivered). */
      outcome: 'delivered' | 'http-error' | 'lost' | 'partitioned' | 'down' | 'duplicated';
      status: number | null;
      /** Simulated time from sending to the answer (latency, jitter and slow inbox included). */
      latencyMs: number;
      attempt: number;
    }
  /** A GET across the network (actor, key, WebFinger, object, collection). */
  | { kind: 'fetch'; from: string; to: string; url: string; outcome: 'ok' | 'http-error' | 'lost' | 'partitioned' | 'down'; status: number | null }
  /** An activity arrived at an instance's inbox and was accepted (2xx). */
  | { kind: 'received'; instance: string; from: string; id: string | null; key: string; type: string }
  /** An inbound activity applied by the instance's inbox listener (ok false: it failed, and Fedify retries it). */
  | { kind: 'applied'; instance: string; id: string | null; type: string; ok: boolean; error?: string }
  /** An outbound activity caused by an inbound one (the outbound's object refers to the inbound). */
  | { kind: 'caused'; instance: string; cause: string; causeType: string; effect: string; effectType: string }
  | { kind: 'clock'; from: string; to: string }
  /**
   * At the run's end, for each thread of the scenario and each Roost: the replies below the root
   * a reader there sees (`known`), of the public ones the scenario posted (`total`).
   */
  | { kind: 'thread'; status: string; instance: string; known: number; total: number }
  | { kind: 'fault'; fault: 'partition' | 'heal' | 'crash' | 'restart' | 'link'; detail: string }
  /** An assertion's outcome; `convergedMs` is the simulated time from the step to when it held. */
  | { kind: 'assertion'; line: number; assertion: string; ok: boolean; convergedMs: number | null; detail: string }
  | { kind: 'run.end'; passed: number; failed: number; simulatedMs: number; wallMs: number }
);

export type TraceKind = TraceRecord['kind'];
