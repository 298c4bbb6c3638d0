/**
 * The federation lab's reports: a trace (src/lab/trace-format.ts, JSON Lines) read back and
 * summarised into figures (`summarize`, pure), written as JSON for notebooks and as one
 * self-contained HTML page with SVG plots (`renderReportHtml`). `roost lab report TRACE` re-renders
 * both from a trace file (`writeReport`); nothing here needs a database or a running instance.
 *
 * Figures are computed from the records alone, so two runs of one seed give the same summary
 * apart from the wall-clock fields (`run.wallMs`, `run.wallStart`, `run.wallEnd`).
 */
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { TraceKind, TraceRecord } from './trace-format.ts';
import { renderPage } from './svg.ts';

type Delivery = Extract<TraceRecord, { kind: 'delivery' }>;
type DeliveryOutcome = Delivery['outcome'];
type FetchOutcome = Extract<TraceRecord, { kind: 'fetch' }>['outcome'];

/**
 * The latency histogram's bucket edges (ms), the same for every distribution so two links or two
 * runs compare bucket by bucket. Roughly 1–2.5–5 per decade up to 10 s, then minutes, hours and a
 * day (retries under Mastodon's backoff reach days); the last bucket is open.
 */
export const BUCKET_EDGES_MS: readonly number[] = [
  0, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 21_600_000,
  86_400_000,
];

/** The quantiles a distribution keeps for its CDF: 0 %, 5 %, …, 100 %. */
export const CDF_STEPS = 20;

export interface Distribution {
  count: number;
  /** null when count is 0. Percentiles are nearest-rank: the smallest value with at least p % at or below it. */
  min: number | null;
  max: number | null;
  /** Rounded to 3 decimals. */
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  /** The value at 0 %, 5 %, …, 100 % (nearest rank; 21 values, empty when count is 0). */
  cdf: number[];
  /** Buckets of BUCKET_EDGES_MS from the one holding min to the one holding max, empty ones between included. `toMs` null: open. */
  histogram: { fromMs: number; toMs: number | null; count: number }[];
}

export interface Outcomes {
  delivered: number;
  lost: number;
  partitioned: number;
  down: number;
  duplicated: number;
  /** All http-error answers, and by status (`"503": 2`; `"none"` when the record has no status). */
  httpError: number;
  httpErrorByStatus: Record<string, number>;
}

export interface LinkSummary {
  from: string;
  to: string;
  /** The software of each end, from run.start (`unknown` for a host it does not list). */
  fromSoftware: string;
  toSoftware: string;
  /** Delivery attempts (every delivery record but the duplicated copies). */
  attempts: number;
  /** Distinct activities (by `key`) that tried this link, and how many never got a 2xx on it. */
  activities: number;
  undelivered: number;
  outcomes: Outcomes;
  /** Each 2xx attempt's latencyMs (duplicated copies left out). */
  latency: Distribution;
  /** Per activity: from its first attempt leaving (t − latencyMs) to its first 2xx answer (t), retries and backoff included. */
  firstDelivery: Distribution;
}

export interface AssertionSummary {
  line: number;
  text: string;
  ok: boolean;
  convergedMs: number | null;
  detail: string;
  t: string;
}

export interface LatencySeries {
  label: string;
  links: number;
  latency: Distribution;
}

export interface TimelineBin {
  delivered: number;
  duplicated: number;
  /** lost, partitioned, down and http-error attempts. */
  failed: number;
}

export interface TimelineSegment {
  /** Simulated time; a segment ends where the clock jumped (or the run ended). */
  start: string;
  end: string;
  bins: TimelineBin[];
}

export interface ActivityTypeCounts {
  /** Distinct activities of the type sent (by sender and `key`), whatever became of them. */
  sent: number;
  /** Delivery attempts carrying it (duplicated copies left out). */
  deliveries: number;
  /** Accepted at an inbox (one per receiving instance). */
  received: number;
}

export interface LabSummary {
  format: 'roost-lab-summary/1';
  run: {
    scenario: string | null;
    seed: number | null;
    instances: { name: string; software: string }[];
    /** A run.end record was seen (false: the run stopped early, or the trace was cut). */
    complete: boolean;
    records: number;
    /** Simulated time of the first and last record. */
    start: string | null;
    end: string | null;
    /** From run.end when present, else from the first and last records' `t` and `wall`. */
    simulatedMs: number;
    wallMs: number;
    wallStart: string | null;
    wallEnd: string | null;
  };
  steps: { total: number; failed: { line: number; step: string; detail: string | null }[] };
  assertions: { passed: number; failed: number; list: AssertionSummary[] };
  /** Over the assertions that held (convergedMs not null). */
  convergence: Distribution;
  deliveries: {
    attempts: number;
    outcomes: Outcomes;
    latency: Distribution;
    firstDelivery: Distribution;
    activities: number;
    undelivered: number;
  };
  /** Sorted by from, then to. */
  links: LinkSummary[];
  /**
   * The latency series the report plots: each link when there are at most 8; else by the
   * destination's software when that makes 2 to 8 groups; else the 7 busiest links and all others.
   */
  latencySeries: { grouping: 'link' | 'destination-software' | 'busiest-links'; series: LatencySeries[] };
  /** Delivery attempts over simulated time, in bins of binMs, one segment per stretch between clock jumps. */
  timeline: { binMs: number; segments: TimelineSegment[] };
  activities: {
    byType: Record<string, ActivityTypeCounts>;
    byInstance: Record<string, { sent: Record<string, number>; received: Record<string, number> }>;
  };
  /** Per instance, per event name (`status.created` …). */
  events: Record<string, Record<string, number>>;
  /** Per instance, `causeType→effectType` counts. */
  caused: Record<string, Record<string, number>>;
  /** Per instance, activities queued for delivery, by type. */
  queued: Record<string, Record<string, number>>;
  /** Per instance, inbound activities applied by the inbox listener: ok, failed, and each failure (`type: error`) counted. */
  applied: Record<string, { ok: number; failed: number; errors: Record<string, number> }>;
  /** Sorted by from, then to. */
  fetches: { from: string; to: string; ok: number; lost: number; partitioned: number; down: number; httpError: number; httpErrorByStatus: Record<string, number> }[];
  clockJumps: { t: string; from: string; to: string; jumpMs: number }[];
  faults: { t: string; fault: string; detail: string }[];
  /** The threads at the run's end: per thread and instance, replies seen of those posted; and the share missing overall. */
  threads: { rows: { status: string; instance: string; known: number; total: number }[]; known: number; total: number; missingShare: number | null };
}

// ---------------------------------------------------------------------------------------------
// Figures

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Nearest-rank percentile of sorted values (p in 0..100). */
function nearestRank(sorted: number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

function bucketOf(value: number): number {
  let i = 0;
  while (i + 1 < BUCKET_EDGES_MS.length && value >= BUCKET_EDGES_MS[i + 1]!) i++;
  return i;
}

export function distribution(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, min: null, max: null, mean: null, p50: null, p90: null, p99: null, cdf: [], histogram: [] };
  const sorted = [...values].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  for (const v of sorted) counts.set(bucketOf(v), (counts.get(bucketOf(v)) ?? 0) + 1);
  const lo = bucketOf(sorted[0]!);
  const hi = bucketOf(sorted[sorted.length - 1]!);
  const histogram = [];
  for (let i = lo; i <= hi; i++) histogram.push({ fromMs: BUCKET_EDGES_MS[i]!, toMs: BUCKET_EDGES_MS[i + 1] ?? null, count: counts.get(i) ?? 0 });
  return {
    count: sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    mean: round3(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    p50: nearestRank(sorted, 50),
    p90: nearestRank(sorted, 90),
    p99: nearestRank(sorted, 99),
    cdf: Array.from({ length: CDF_STEPS + 1 }, (_, k) => nearestRank(sorted, (k * 100) / CDF_STEPS)),
    histogram,
  };
}

function emptyOutcomes(): Outcomes {
  return { delivered: 0, lost: 0, partitioned: 0, down: 0, duplicated: 0, httpError: 0, httpErrorByStatus: {} };
}

function countOutcome(o: Outcomes, outcome: DeliveryOutcome, status: number | null): void {
  if (outcome === 'http-error') {
    o.httpError++;
    const s = status === null ? 'none' : String(status);
    o.httpErrorByStatus[s] = (o.httpErrorByStatus[s] ?? 0) + 1;
  } else {
    o[outcome]++;
  }
}

/** A copy of a string-keyed map with its keys sorted, so the JSON is the same whatever the trace's order. */
function sortedRecord<V>(map: Map<string, V> | Record<string, V>, mapValue: (v: V) => unknown = (v) => v): Record<string, never> {
  const entries = map instanceof Map ? [...map.entries()] : Object.entries(map);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, mapValue(v)])) as Record<string, never>;
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function nested(map: Map<string, Map<string, number>>, outer: string): Map<string, number> {
  let inner = map.get(outer);
  if (!inner) map.set(outer, (inner = new Map()));
  return inner;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A round bin width (ms) giving at most ~40 bins over `spanMs`. */
const BIN_WIDTHS_MS = [
  10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000,
  43_200_000, 86_400_000,
];
export function binWidthFor(spanMs: number, target = 40): number {
  for (const w of BIN_WIDTHS_MS) if (spanMs / w <= target) return w;
  return Math.ceil(spanMs / target / 86_400_000) * 86_400_000;
}

interface LinkAcc {
  from: string;
  to: string;
  outcomes: Outcomes;
  attempts: number;
  latencies: number[];
  /** key → first attempt's departure (ms), first 2xx arrival (ms) or null. */
  activities: Map<string, { firstMs: number; deliveredMs: number | null }>;
}

/** The summary of a trace's records, in the order the trace holds them. Pure. */
export function summarize(records: TraceRecord[]): LabSummary {
  let start: TraceRecord & { kind: 'run.start' } | null = null;
  let end: TraceRecord & { kind: 'run.end' } | null = null;
  const softwareOf = new Map<string, string>();
  const steps: LabSummary['steps'] = { total: 0, failed: [] };
  const assertions: AssertionSummary[] = [];
  const links = new Map<string, LinkAcc>();
  const fetches = new Map<string, LabSummary['fetches'][number]>();
  const sentKeys = new Map<string, Set<string>>(); // type → `${from} ${key}`
  const deliveriesByType = new Map<string, number>();
  const receivedByType = new Map<string, number>();
  const sentByInstance = new Map<string, Map<string, Set<string>>>();
  const receivedByInstance = new Map<string, Map<string, number>>();
  const events = new Map<string, Map<string, number>>();
  const caused = new Map<string, Map<string, number>>();
  const queued = new Map<string, Map<string, number>>();
  const applied = new Map<string, { ok: number; failed: number; errors: Map<string, number> }>();
  const threadRows: { status: string; instance: string; known: number; total: number }[] = [];
  const clockJumps: LabSummary['clockJumps'] = [];
  const faults: LabSummary['faults'] = [];
  // Timeline: the stretches of simulated time between clock jumps, and each attempt's time and class.
  const stretches: { startMs: number; endMs: number; attempts: { ms: number; cls: keyof TimelineBin }[] }[] = [];
  let firstT: string | null = null;
  let lastT: string | null = null;
  let firstWall: string | null = null;
  let lastWall: string | null = null;

  for (const r of records) {
    const ms = Date.parse(r.t);
    firstT ??= r.t;
    lastT = r.t;
    firstWall ??= r.wall;
    lastWall = r.wall;
    if (stretches.length === 0) stretches.push({ startMs: ms, endMs: ms, attempts: [] });
    const stretch = stretches[stretches.length - 1]!;
    if (r.kind !== 'clock') stretch.endMs = Math.max(stretch.endMs, ms);

    switch (r.kind) {
      case 'run.start':
        start ??= r;
        for (const i of r.instances) softwareOf.set(i.name, i.software);
        break;
      case 'run.end':
        end = r;
        break;
      case 'step':
        steps.total++;
        if (!r.ok) steps.failed.push({ line: r.line, step: r.step, detail: r.detail ?? null });
        break;
      case 'assertion':
        assertions.push({ line: r.line, text: r.assertion, ok: r.ok, convergedMs: r.convergedMs, detail: r.detail, t: r.t });
        break;
      case 'event':
        bump(nested(events, r.instance), r.event);
        break;
      case 'caused':
        bump(nested(caused, r.instance), `${r.causeType}→${r.effectType}`);
        break;
      case 'clock': {
        const fromMs = Date.parse(r.from);
        const toMs = Date.parse(r.to);
        clockJumps.push({ t: r.t, from: r.from, to: r.to, jumpMs: toMs - fromMs });
        stretch.endMs = Math.max(stretch.endMs, fromMs);
        stretches.push({ startMs: toMs, endMs: toMs, attempts: [] });
        break;
      }
      case 'fault':
        faults.push({ t: r.t, fault: r.fault, detail: r.detail });
        break;
      case 'thread':
        threadRows.push({ status: r.status, instance: r.instance, known: r.known, total: r.total });
        break;
      case 'queued':
        bump(nested(queued, r.instance), r.type);
        break;
      case 'applied': {
        const a = applied.get(r.instance) ?? { ok: 0, failed: 0, errors: new Map<string, number>() };
        applied.set(r.instance, a);
        if (r.ok) a.ok++;
        else {
          a.failed++;
          bump(a.errors, `${r.type}: ${r.error ?? 'no message'}`);
        }
        break;
      }
      case 'received': {
        bump(receivedByType, r.type);
        bump(nested(receivedByInstance, r.instance), r.type);
        break;
      }
      case 'fetch': {
        const id = `${r.from}\n${r.to}`;
        let f = fetches.get(id);
        if (!f) fetches.set(id, (f = { from: r.from, to: r.to, ok: 0, lost: 0, partitioned: 0, down: 0, httpError: 0, httpErrorByStatus: {} }));
        if (r.outcome === 'http-error') {
          f.httpError++;
          const s = r.status === null ? 'none' : String(r.status);
          f.httpErrorByStatus[s] = (f.httpErrorByStatus[s] ?? 0) + 1;
        } else {
          f[r.outcome satisfies Exclude<FetchOutcome, 'http-error'>]++;
        }
        break;
      }
      case 'delivery': {
        const id = `${r.from}\n${r.to}`;
        let link = links.get(id);
        if (!link) links.set(id, (link = { from: r.from, to: r.to, outcomes: emptyOutcomes(), attempts: 0, latencies: [], activities: new Map() }));
        countOutcome(link.outcomes, r.outcome, r.status);
        stretch.attempts.push({ ms, cls: r.outcome === 'delivered' ? 'delivered' : r.outcome === 'duplicated' ? 'duplicated' : 'failed' });
        if (r.outcome === 'duplicated') break; // a second copy: neither an attempt nor a latency of its own
        link.attempts++;
        bump(deliveriesByType, r.type);
        let sent = sentKeys.get(r.type);
        if (!sent) sentKeys.set(r.type, (sent = new Set()));
        sent.add(`${r.from}\n${r.key}`);
        const perInstance = sentByInstance.get(r.from) ?? new Map<string, Set<string>>();
        sentByInstance.set(r.from, perInstance);
        if (!perInstance.has(r.type)) perInstance.set(r.type, new Set());
        perInstance.get(r.type)!.add(r.key);
        // The network writes a delivery when its answer comes (or it fails): `t` is the answer's
        // time, and the attempt left latencyMs before.
        let activity = link.activities.get(r.key);
        if (!activity) link.activities.set(r.key, (activity = { firstMs: ms - r.latencyMs, deliveredMs: null }));
        if (r.outcome === 'delivered') {
          link.latencies.push(r.latencyMs);
          activity.deliveredMs ??= ms;
        }
        break;
      }
    }
  }

  // Links, sorted; the totals over all of them.
  const linkList = [...links.values()].sort((a, b) => byName(a.from, b.from) || byName(a.to, b.to));
  const total = emptyOutcomes();
  const allLatencies: number[] = [];
  const allFirst: number[] = [];
  let totalAttempts = 0;
  let totalActivities = 0;
  let totalUndelivered = 0;
  const linkSummaries: LinkSummary[] = linkList.map((l) => {
    const first = [...l.activities.values()].filter((a) => a.deliveredMs !== null).map((a) => a.deliveredMs! - a.firstMs);
    const undelivered = [...l.activities.values()].filter((a) => a.deliveredMs === null).length;
    for (const k of ['delivered', 'lost', 'partitioned', 'down', 'duplicated', 'httpError'] as const) total[k] += l.outcomes[k];
    for (const [s, n] of Object.entries(l.outcomes.httpErrorByStatus)) total.httpErrorByStatus[s] = (total.httpErrorByStatus[s] ?? 0) + n;
    allLatencies.push(...l.latencies);
    allFirst.push(...first);
    totalAttempts += l.attempts;
    totalActivities += l.activities.size;
    totalUndelivered += undelivered;
    return {
      from: l.from,
      to: l.to,
      fromSoftware: softwareOf.get(l.from) ?? 'unknown',
      toSoftware: softwareOf.get(l.to) ?? 'unknown',
      attempts: l.attempts,
      activities: l.activities.size,
      undelivered,
      outcomes: { ...l.outcomes, httpErrorByStatus: sortedRecord(l.outcomes.httpErrorByStatus) },
      latency: distribution(l.latencies),
      firstDelivery: distribution(first),
    };
  });

  // The series the latency plot draws: few enough lines to read (see LabSummary.latencySeries).
  let latencySeries: LabSummary['latencySeries'];
  const bySoftware = new Map<string, LinkAcc[]>();
  for (const l of linkList) {
    const s = softwareOf.get(l.to) ?? 'unknown';
    bySoftware.set(s, [...(bySoftware.get(s) ?? []), l]);
  }
  const withDeliveries = linkList.filter((l) => l.latencies.length > 0);
  if (withDeliveries.length <= 8) {
    latencySeries = { grouping: 'link', series: withDeliveries.map((l) => ({ label: `${l.from} → ${l.to}`, links: 1, latency: distribution(l.latencies) })) };
  } else if (bySoftware.size >= 2 && bySoftware.size <= 8) {
    latencySeries = {
      grouping: 'destination-software',
      series: [...bySoftware.entries()]
        .sort(([a], [b]) => byName(a, b))
        .map(([software, ls]) => ({ label: `to ${software}`, links: ls.length, latency: distribution(ls.flatMap((l) => l.latencies)) })),
    };
  } else {
    const busiest = [...withDeliveries].sort((a, b) => b.latencies.length - a.latencies.length || byName(a.from, b.from) || byName(a.to, b.to));
    const top = busiest.slice(0, 7);
    const others = busiest.slice(7);
    latencySeries = {
      grouping: 'busiest-links',
      series: [
        ...top.map((l) => ({ label: `${l.from} → ${l.to}`, links: 1, latency: distribution(l.latencies) })),
        { label: `all ${others.length} other links`, links: others.length, latency: distribution(others.flatMap((l) => l.latencies)) },
      ],
    };
  }

  // The timeline's bins: one width over the whole run, never straddling a clock jump.
  const spanMs = stretches.reduce((a, s) => a + (s.endMs - s.startMs), 0);
  const binMs = binWidthFor(Math.max(spanMs, 1));
  const segments: TimelineSegment[] = stretches.map((s) => {
    const n = Math.floor((s.endMs - s.startMs) / binMs) + 1;
    const bins: TimelineBin[] = Array.from({ length: n }, () => ({ delivered: 0, duplicated: 0, failed: 0 }));
    // Clamped: a record stamped before its stretch began (a clock set back) goes in its first bin.
    for (const a of s.attempts) bins[Math.min(n - 1, Math.max(0, Math.floor((a.ms - s.startMs) / binMs)))]![a.cls]++;
    return { start: isoOf(s.startMs), end: isoOf(s.endMs), bins };
  });

  const byType: Record<string, ActivityTypeCounts> = {};
  for (const type of [...new Set([...sentKeys.keys(), ...receivedByType.keys()])].sort(byName)) {
    byType[type] = { sent: sentKeys.get(type)?.size ?? 0, deliveries: deliveriesByType.get(type) ?? 0, received: receivedByType.get(type) ?? 0 };
  }
  const byInstance: LabSummary['activities']['byInstance'] = {};
  for (const name of [...new Set([...sentByInstance.keys(), ...receivedByInstance.keys()])].sort(byName)) {
    byInstance[name] = {
      sent: sortedRecord(sentByInstance.get(name) ?? new Map(), (s: Set<string>) => s.size),
      received: sortedRecord(receivedByInstance.get(name) ?? new Map()),
    };
  }

  const convergence = distribution(assertions.filter((a) => a.convergedMs !== null).map((a) => a.convergedMs!));
  const simulatedMs = end ? end.simulatedMs : firstT && lastT ? Date.parse(lastT) - Date.parse(firstT) : 0;
  const wallMs = end ? end.wallMs : firstWall && lastWall ? Date.parse(lastWall) - Date.parse(firstWall) : 0;

  return {
    format: 'roost-lab-summary/1',
    run: {
      scenario: start?.scenario ?? null,
      seed: start?.seed ?? null,
      instances: start ? start.instances.map((i) => ({ name: i.name, software: i.software })) : [],
      complete: end !== null,
      records: records.length,
      start: firstT,
      end: lastT,
      simulatedMs,
      wallMs,
      wallStart: firstWall,
      wallEnd: lastWall,
    },
    steps,
    assertions: { passed: assertions.filter((a) => a.ok).length, failed: assertions.filter((a) => !a.ok).length, list: assertions },
    convergence,
    deliveries: {
      attempts: totalAttempts,
      outcomes: { ...total, httpErrorByStatus: sortedRecord(total.httpErrorByStatus) },
      latency: distribution(allLatencies),
      firstDelivery: distribution(allFirst),
      activities: totalActivities,
      undelivered: totalUndelivered,
    },
    links: linkSummaries,
    latencySeries,
    timeline: { binMs, segments },
    activities: { byType, byInstance },
    events: sortedRecord(events, (m: Map<string, number>) => sortedRecord(m)),
    caused: sortedRecord(caused, (m: Map<string, number>) => sortedRecord(m)),
    queued: sortedRecord(queued, (m: Map<string, number>) => sortedRecord(m)),
    applied: sortedRecord(applied, (a: { ok: number; failed: number; errors: Map<string, number> }) => ({ ok: a.ok, failed: a.failed, errors: sortedRecord(a.errors) })),
    fetches: [...fetches.values()].sort((a, b) => byName(a.from, b.from) || byName(a.to, b.to)).map((f) => ({ ...f, httpErrorByStatus: sortedRecord(f.httpErrorByStatus) })),
    clockJumps,
    faults,
    threads: threadSummary(threadRows),
  };
}

function threadSummary(rows: { status: string; instance: string; known: number; total: number }[]): LabSummary['threads'] {
  const sorted = [...rows].sort((a, b) => byName(a.status, b.status) || byName(a.instance, b.instance));
  const known = sorted.reduce((n, r) => n + Math.min(r.known, r.total), 0);
  const total = sorted.reduce((n, r) => n + r.total, 0);
  return { rows: sorted, known, total, missingShare: total === 0 ? null : (total - known) / total };
}

/** Milliseconds since the epoch as the trace writes times (ISO 8601, milliseconds, UTC). */
function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** JSON with every object's keys sorted (arrays keep their order), two-space indented, one final newline. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort(byName).map((k) => [k, sort((v as Record<string, unknown>)[k])]));
    return v;
  };
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Reading a trace

export class TraceError extends Error {
  override name = 'TraceError';
  readonly line: number;
  constructor(file: string, line: number, reason: string) {
    super(`${file}: line ${line}: ${reason}`);
    this.line = line;
  }
}

type Check = 'string' | 'string|null' | 'number' | 'number|null' | 'boolean' | 'time' | 'instances' | 'count|followers' | readonly string[];

/** Each kind's fields and what they hold (trace-format.ts). A field marked optional is `?`-suffixed. */
const FIELDS: Record<TraceKind, Record<string, Check>> = {
  'run.start': { scenario: 'string', seed: 'number', instances: 'instances' },
  step: { line: 'number', step: 'string', ok: 'boolean', 'detail?': 'string' },
  event: { instance: 'string', event: 'string' },
  delivery: {
    from: 'string',
    to: 'string',
    inbox: 'string',
    id: 'string|null',
    key: 'string',
    type: 'string',
    outcome: ['delivered', 'http-error', 'lost', 'partitioned', 'down', 'duplicated'],
    status: 'number|null',
    latencyMs: 'number',
    attempt: 'number',
  },
  fetch: { from: 'string', to: 'string', url: 'string', outcome: ['ok', 'http-error', 'lost', 'partitioned', 'down'], status: 'number|null' },
  received: { instance: 'string', from: 'string', id: 'string|null', key: 'string', type: 'string' },
  caused: { instance: 'string', cause: 'string', causeType: 'string', effect: 'string', effectType: 'string' },
  queued: { instance: 'string', id: 'string', type: 'string', inboxes: 'count|followers' },
  applied: { instance: 'string', id: 'string|null', type: 'string', ok: 'boolean', 'error?': 'string' },
  clock: { from: 'time', to: 'time' },
  thread: { status: 'string', instance: 'string', known: 'number', total: 'number' },
  fault: { fault: ['partition', 'heal', 'crash', 'restart', 'link'], detail: 'string' },
  assertion: { line: 'number', assertion: 'string', ok: 'boolean', convergedMs: 'number|null', detail: 'string' },
  'run.end': { passed: 'number', failed: 'number', simulatedMs: 'number', wallMs: 'number' },
};

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

function fits(value: unknown, check: Check): boolean {
  if (Array.isArray(check)) return typeof value === 'string' && check.includes(value);
  switch (check) {
    case 'string':
      return typeof value === 'string';
    case 'string|null':
      return value === null || typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'number|null':
      return value === null || (typeof value === 'number' && Number.isFinite(value));
    case 'boolean':
      return typeof value === 'boolean';
    case 'time':
      return typeof value === 'string' && ISO_TIME.test(value) && !Number.isNaN(Date.parse(value));
    case 'count|followers':
      return value === 'followers' || (typeof value === 'number' && Number.isInteger(value) && value >= 0);
    case 'instances':
      return Array.isArray(value) && value.every((i) => i && typeof i === 'object' && typeof i.name === 'string' && typeof i.software === 'string');
  }
  return false;
}

function describeCheck(check: Check): string {
  if (Array.isArray(check)) return `one of ${check.join(', ')}`;
  return (
    { string: 'a string', 'string|null': 'a string or null', number: 'a number', 'number|null': 'a number or null', boolean: 'true or false', time: 'an ISO 8601 time', 'count|followers': 'a count or "followers"', instances: 'a list of {name, software}' } as Record<string, string>
  )[check as string]!;
}

/** Why one parsed line is not a TraceRecord, or null when it is one. */
export function recordProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (typeof r.kind !== 'string' || !Object.hasOwn(FIELDS, r.kind)) return `unknown kind ${JSON.stringify(r.kind)}`;
  for (const field of ['t', 'wall']) if (!fits(r[field], 'time')) return `${r.kind}: ${field} must be an ISO 8601 time`;
  for (const [name, check] of Object.entries(FIELDS[r.kind as TraceKind])) {
    const optional = name.endsWith('?');
    const field = optional ? name.slice(0, -1) : name;
    if (optional && r[field] === undefined) continue;
    if (!(field in r)) return `${r.kind}: ${field} is missing`;
    if (!fits(r[field], check)) return `${r.kind}: ${field} must be ${describeCheck(check)}`;
  }
  return null;
}

/**
 * Reads a trace file line by line (a run's trace can be large: it is streamed, not slurped).
 * Blank lines are skipped; anything else that is not a record fails with its 1-based line.
 */
export async function readTrace(file: string): Promise<TraceRecord[]> {
  const records: TraceRecord[] = [];
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new TraceError(file, n, `not JSON (${(e as Error).message})`);
    }
    const problem = recordProblem(value);
    if (problem) throw new TraceError(file, n, problem);
    records.push(value as TraceRecord);
  }
  return records;
}

// ---------------------------------------------------------------------------------------------
// The page and the files

/** The report as one HTML page: no script, nothing fetched, every trace string escaped. */
export function renderReportHtml(summary: LabSummary): string {
  return renderPage(summary);
}

/** `poll.trace.jsonl` → `poll`: the name the report's files take. */
export function reportBaseName(tracePath: string): string {
  return path.basename(tracePath).replace(/\.(jsonl|ndjson|json|log)$/i, '').replace(/\.trace$/i, '') || 'trace';
}

/**
 * Reads the trace and writes `<name>.report.html` and `<name>.summary.json` beside it, or into
 * outDir (created when missing). Returns the two paths and the summary.
 */
export async function writeReport(tracePath: string, outDir?: string): Promise<{ html: string; json: string; summary: LabSummary }> {
  const summary = summarize(await readTrace(tracePath));
  const dir = outDir ?? path.dirname(tracePath);
  await mkdir(dir, { recursive: true });
  const base = path.join(dir, reportBaseName(tracePath));
  const html = `${base}.report.html`;
  const json = `${base}.summary.json`;
  await writeFile(json, stableJson(summary));
  await writeFile(html, renderReportHtml(summary));
  return { html, json, summary };
}
