/**
 * The lab's reports from a hand-written trace (test/fixtures/lab/poll-partition.trace.jsonl: three
 * instances, a partition and its heal, a crash, two clock jumps, retries, HTTP errors, a duplicated
 * copy, a failed step and a failed assertion whose detail carries a <script>): the summary's exact
 * figures, worked out by hand from the records; the page (one SVG per plot, nothing fetched, every
 * trace string escaped); a trace that is not one, named by its line; and `roost lab report` as a
 * real process, which opens no database.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readTrace, summarize, renderReportHtml, stableJson, writeReport, reportBaseName, TraceError, type LabSummary } from '../../src/lab/report.ts';
import { runCli, ROOT } from '../helpers/cli.ts';
import { fanOutTrace } from '../fixtures/lab/fan-out.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/lab/poll-partition.trace.jsonl');
let tmp: string;
let s: LabSummary;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'roost-lab-report-'));
  s = summarize(await readTrace(FIXTURE));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const pick = <T extends object>(d: T, keys: (keyof T)[]) => Object.fromEntries(keys.map((k) => [k, d[k]]));
const STATS = ['count', 'min', 'p50', 'p90', 'p99', 'max', 'mean'] as const;

describe('summarize', () => {
  it('the run, its steps and its assertions', () => {
    expect(s.run).toEqual({
      scenario: 'poll across three instances, with a partition',
      seed: 42,
      instances: [
        { name: 'alpha.test', software: 'roost' },
        { name: 'beta.test', software: 'roost' },
        { name: 'gamma.test', software: 'mastodon' },
      ],
      complete: true,
      records: 80,
      start: '2026-01-01T00:00:00.000Z',
      end: '2026-01-02T00:04:41.200Z',
      simulatedMs: 86_681_200,
      wallMs: 2350,
      wallStart: '2026-11-28T10:00:00.000Z',
      wallEnd: '2026-11-28T10:00:02.250Z',
    });
    expect(s.steps).toEqual({ total: 13, failed: [{ line: 34, step: 'vote carol@gamma.test: 0', detail: 'the poll has ended (422)' }] });
    expect([s.assertions.passed, s.assertions.failed]).toEqual([3, 1]);
    expect(s.assertions.list.map((a) => [a.line, a.ok, a.convergedMs])).toEqual([
      [36, true, 245_120],
      [37, true, 200],
      [38, true, 0],
      [39, false, null],
    ]);
    expect(s.assertions.list[3]).toEqual({
      line: 39,
      text: "bob's boost is visible on gamma.test within 10s",
      ok: false,
      convergedMs: null,
      detail: 'not visible after 10 s; last answer: <script>alert(1)</script>',
      t: '2026-01-02T00:04:41.100Z',
    });
    // Convergence over the three that held: 0, 200, 245 120 ms.
    expect(pick(s.convergence, [...STATS])).toEqual({ count: 3, min: 0, p50: 200, p90: 245_120, p99: 245_120, max: 245_120, mean: 81_773.333 });
  });

  it('delivery outcomes and latency per link, nearest-rank percentiles', () => {
    expect(
      s.links.map((l) => [`${l.from}>${l.to}`, l.toSoftware, l.attempts, l.activities, l.undelivered, l.outcomes, pick(l.latency, [...STATS])]),
    ).toEqual([
      ['alpha.test>beta.test', 'roost', 5, 4, 0, { delivered: 4, lost: 0, partitioned: 0, down: 1, duplicated: 1, httpError: 0, httpErrorByStatus: {} }, { count: 4, min: 35, p50: 50, p90: 65, p99: 65, max: 65, mean: 51.25 }],
      ['alpha.test>gamma.test', 'mastodon', 6, 4, 0, { delivered: 4, lost: 1, partitioned: 1, down: 0, duplicated: 0, httpError: 0, httpErrorByStatus: {} }, { count: 4, min: 130, p50: 140, p90: 180, p99: 180, max: 180, mean: 150 }],
      ['beta.test>alpha.test', 'roost', 3, 3, 0, { delivered: 3, lost: 0, partitioned: 0, down: 0, duplicated: 0, httpError: 0, httpErrorByStatus: {} }, { count: 3, min: 40, p50: 45, p90: 70, p99: 70, max: 70, mean: 51.667 }],
      ['beta.test>gamma.test', 'mastodon', 2, 1, 0, { delivered: 1, lost: 0, partitioned: 0, down: 0, duplicated: 0, httpError: 1, httpErrorByStatus: { 503: 1 } }, { count: 1, min: 90, p50: 90, p90: 90, p99: 90, max: 90, mean: 90 }],
      ['gamma.test>alpha.test', 'roost', 5, 3, 1, { delivered: 2, lost: 0, partitioned: 2, down: 0, duplicated: 0, httpError: 1, httpErrorByStatus: { 400: 1 } }, { count: 2, min: 110, p50: 110, p90: 120, p99: 120, max: 120, mean: 115 }],
    ]);
    // All 14 answered attempts: 35 40 45 50 55 65 70 90 110 120 130 140 150 180 (sum 1280).
    const all = s.deliveries.latency;
    expect(pick(all, [...STATS])).toEqual({ count: 14, min: 35, p50: 70, p90: 150, p99: 180, max: 180, mean: 91.429 });
    expect(all.histogram).toEqual([
      { fromMs: 25, toMs: 50, count: 3 },
      { fromMs: 50, toMs: 100, count: 5 },
      { fromMs: 100, toMs: 250, count: 6 },
    ]);
    expect(all.cdf).toEqual([35, 35, 40, 45, 45, 50, 55, 55, 65, 70, 70, 90, 110, 120, 120, 130, 140, 140, 150, 180, 180]);
    expect(s.deliveries.outcomes).toEqual({ delivered: 14, lost: 1, partitioned: 3, down: 1, duplicated: 1, httpError: 2, httpErrorByStatus: { 400: 1, 503: 1 } });
    expect([s.deliveries.attempts, s.deliveries.activities, s.deliveries.undelivered]).toEqual([21, 15, 1]);
  });

  it("first delivery: from an activity's first attempt to its first 2xx arriving, retries and clock jumps included", () => {
    const first = Object.fromEntries(s.links.map((l) => [`${l.from}>${l.to}`, [l.firstDelivery.min, l.firstDelivery.max]]));
    expect(first).toEqual({
      // A delivery record is written at its answer: the attempt left latencyMs before `t`.
      // update:poll:2 first found beta down at 00:04:25.000 on day 1, then was answered at 00:04:40.020 on day 2.
      'alpha.test>beta.test': [35, 86_415_020],
      'alpha.test>gamma.test': [150, 86_415_020],
      'beta.test>alpha.test': [40, 70],
      // The Announce: left at 00:03:19.720 (a 503 answered 300 ms later), delivered at 00:03:50.020.
      'beta.test>gamma.test': [30_300, 30_300],
      // carol's vote: partitioned at 00:00:05.010, delivered at 00:04:10.010 (the 3-minute jump in between).
      'gamma.test>alpha.test': [120, 245_000],
    });
    expect(pick(s.deliveries.firstDelivery, ['count', 'p50', 'p90', 'max'])).toEqual({ count: 14, p50: 120, p90: 86_415_020, max: 86_415_020 });
  });

  it('activities per type and instance, events, causes, fetches', () => {
    expect(s.activities.byType).toEqual({
      "<script>alert('type')</script>": { sent: 1, deliveries: 1, received: 0 },
      Accept: { sent: 2, deliveries: 2, received: 2 },
      Announce: { sent: 1, deliveries: 3, received: 2 },
      Create: { sent: 3, deliveries: 6, received: 4 },
      Follow: { sent: 2, deliveries: 2, received: 2 },
      Update: { sent: 2, deliveries: 7, received: 4 },
    });
    expect(s.activities.byInstance).toEqual({
      'alpha.test': { sent: { Accept: 2, Create: 1, Update: 2 }, received: { Announce: 1, Create: 2, Follow: 2 } },
      'beta.test': { sent: { Announce: 1, Create: 1, Follow: 1 }, received: { Accept: 1, Create: 1, Update: 2 } },
      'gamma.test': { sent: { "<script>alert('type')</script>": 1, Create: 1, Follow: 1 }, received: { Accept: 1, Announce: 1, Create: 1, Update: 2 } },
    });
    expect(s.events).toEqual({
      'alpha.test': { 'follow.accepted': 2, 'poll.closed': 1, 'poll.updated': 2, 'poll.voted': 2, 'status.created': 1 },
      'beta.test': { 'follow.requested': 1, 'poll.voted': 1, 'status.reblogged': 1 },
    });
    expect(s.caused).toEqual({ 'alpha.test': { 'Follow→Accept': 2 } });
    expect(s.queued).toEqual({ 'alpha.test': { Create: 1 }, 'beta.test': { Follow: 1 } });
    expect(s.applied).toEqual({
      'alpha.test': { ok: 1, failed: 0, errors: {} },
      'gamma.test': { ok: 0, failed: 1, errors: { 'Announce: the boosted status is not known yet': 1 } },
    });
    expect(s.fetches).toEqual([{ from: 'gamma.test', to: 'alpha.test', ok: 1, lost: 0, partitioned: 1, down: 0, httpError: 0, httpErrorByStatus: {} }]);
  });

  it('clock jumps, faults in order, and the timeline split at each jump', () => {
    expect(s.clockJumps).toEqual([
      { t: '2026-01-01T00:03:06.000Z', from: '2026-01-01T00:00:06.000Z', to: '2026-01-01T00:03:06.000Z', jumpMs: 180_000 },
      { t: '2026-01-02T00:04:40.000Z', from: '2026-01-01T00:04:40.000Z', to: '2026-01-02T00:04:40.000Z', jumpMs: 86_400_000 },
    ]);
    expect(s.faults.map((f) => [f.t.slice(11), f.fault, f.detail])).toEqual([
      ['00:00:03.000Z', 'partition', 'alpha.test | gamma.test'],
      ['00:03:40.000Z', 'heal', 'alpha.test | gamma.test'],
      ['00:04:20.000Z', 'crash', 'beta.test'],
      ['00:04:30.000Z', 'restart', 'beta.test'],
    ]);
    // 6 s + 94 s + 1.2 s of simulated time between the jumps: 5 s bins.
    expect(s.timeline.binMs).toBe(5_000);
    const nonEmpty = s.timeline.segments.map((g) => [g.start, g.end, g.bins.length, g.bins.flatMap((b, i) => (b.delivered + b.duplicated + b.failed ? [[i, b.delivered, b.duplicated, b.failed]] : []))]);
    expect(nonEmpty).toEqual([
      ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:06.000Z', 2, [[0, 7, 1, 0], [1, 0, 0, 1]]],
      ['2026-01-01T00:03:06.000Z', '2026-01-01T00:04:40.000Z', 19, [[0, 1, 0, 2], [2, 1, 0, 1], [4, 0, 0, 1], [8, 1, 0, 0], [12, 2, 0, 0], [15, 0, 0, 2]]],
      ['2026-01-02T00:04:40.000Z', '2026-01-02T00:04:41.200Z', 1, [[0, 2, 0, 0]]],
    ]);
  });

  it('plots each link when there are few; by destination software, or the busiest and all others, when there are many', () => {
    expect(s.latencySeries.grouping).toBe('link');
    expect(s.latencySeries.series.map((x) => [x.label, x.latency.count])).toEqual([
      ['alpha.test → beta.test', 4],
      ['alpha.test → gamma.test', 4],
      ['beta.test → alpha.test', 3],
      ['beta.test → gamma.test', 1],
      ['gamma.test → alpha.test', 2],
    ]);
    // 250 peers, software cycling over four, every 10th down.
    const wide = summarize(fanOutTrace(250));
    expect(wide.links).toHaveLength(250);
    expect(wide.latencySeries.grouping).toBe('destination-software');
    expect(wide.latencySeries.series.map((x) => [x.label, x.links, x.latency.count])).toEqual([
      ['to gotosocial', 63, 50],
      ['to mastodon', 63, 63],
      ['to misskey', 62, 62],
      ['to pleroma', 62, 50],
    ]);
    expect([wide.deliveries.outcomes.delivered, wide.deliveries.outcomes.down, wide.deliveries.undelivered]).toEqual([225, 25, 25]);
    // One software everywhere: the 7 busiest links (ties by name) and the rest together.
    const same = summarize(fanOutTrace(20, ['roost']));
    expect(same.latencySeries.grouping).toBe('busiest-links');
    expect(same.latencySeries.series.map((x) => [x.label, x.links])).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7].map((i) => [`alpha.test → peer-00${i}.test`, 1]),
      ['all 11 other links', 11],
    ]);
  });

  it('stable JSON: keys sorted at every level, arrays in order, and only the wall-clock fields differ between two runs of a seed', async () => {
    const json = stableJson(s);
    expect(json.endsWith('}\n')).toBe(true);
    const keysSorted = (v: unknown): boolean =>
      Array.isArray(v) ? v.every(keysSorted) : v && typeof v === 'object' ? Object.keys(v).join('\n') === Object.keys(v).sort().join('\n') && Object.values(v).every(keysSorted) : true;
    expect(keysSorted(JSON.parse(json))).toBe(true);
    expect(Object.keys(JSON.parse(json)).slice(0, 4)).toEqual(['activities', 'applied', 'assertions', 'caused']);
    // The same run again: other wall-clock times, the same summary but for run.wall*.
    const again = (await readTrace(FIXTURE)).map((r, i) => ({ ...r, wall: new Date(Date.UTC(2026, 11, 1) + i * 7).toISOString() }));
    const other = summarize(again);
    expect({ ...other, run: { ...other.run, wallStart: null, wallEnd: null } }).toEqual({ ...s, run: { ...s.run, wallStart: null, wallEnd: null } });
    expect(other.run.wallStart).toBe('2026-12-01T00:00:00.000Z');
  });

  it('an empty or cut trace still summarises', () => {
    const none = summarize([]);
    expect([none.run.complete, none.run.records, none.deliveries.latency.count, none.latencySeries.series, none.assertions.list]).toEqual([false, 0, 0, [], []]);
    const cut = summarize(fanOutTrace(5).slice(0, -1));
    expect([cut.run.complete, cut.run.simulatedMs]).toEqual([false, 60_000]);
    expect(renderReportHtml(none)).toContain('No deliveries to plot.');
  });
});

describe('renderReportHtml', () => {
  it('one self-contained page: an <svg> per plot with its title and desc, nothing fetched', () => {
    const page = renderReportHtml(s);
    expect(page.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    const svgs = page.match(/<svg\b[^>]*>/g) ?? [];
    expect(svgs.map((t) => /id="([^"]+)"/.exec(t)![1])).toEqual(['plot-latency-cdf', 'plot-latency-histogram', 'plot-timeline', 'plot-activities']);
    for (const id of ['plot-latency-cdf', 'plot-latency-histogram', 'plot-timeline', 'plot-activities']) {
      expect(page).toContain(`<title id="${id}-title">`);
      expect(page).toContain(`<desc id="${id}-desc">`);
    }
    expect((page.match(/<table>/g) ?? []).length).toBeGreaterThanOrEqual(4);
    // No resource from anywhere: no src, no stylesheet link, no @import, no url(), no absolute URL in an attribute.
    expect(page).not.toMatch(/\bsrc\s*=/i);
    expect(page).not.toMatch(/<link\b/i);
    expect(page).not.toMatch(/@import/i);
    expect(page).not.toMatch(/url\(/i);
    expect(page).not.toMatch(/(href|xlink:href|action|poster|data)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(page).toContain('@media (prefers-color-scheme: dark)');
  });

  it('escapes every string from the trace', () => {
    const page = renderReportHtml(s);
    expect(page).not.toMatch(/<script/i);
    expect(page).toContain('last answer: &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&lt;script&gt;alert(&#39;type&#39;)&lt;/script&gt;');
    // Hostile names in every place a name goes: the title, the SVG texts, the tables.
    const evil = '"><img src=x onerror=alert(1)><script>x</script>';
    const hostile = summarize(
      fanOutTrace(3).map((r) =>
        r.kind === 'run.start'
          ? { ...r, scenario: evil, instances: r.instances.map((i) => ({ ...i, software: evil })) }
          : r.kind === 'delivery' || r.kind === 'received'
            ? { ...r, type: evil }
            : r.kind === 'event'
              ? { ...r, event: evil }
              : r,
      ),
    );
    const bad = renderReportHtml(hostile);
    expect(bad).not.toMatch(/<script|<img/i);
    expect(bad).toContain('<title>Lab report: &quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;x&lt;/script&gt;</title>');
  });
});

describe('readTrace', () => {
  it('reads the records and skips blank lines', async () => {
    const file = path.join(tmp, 'blank.jsonl');
    const lines = (await readFile(FIXTURE, 'utf8')).trimEnd().split('\n');
    await writeFile(file, `${lines.slice(0, 3).join('\n')}\n\n${lines[3]}\n`);
    expect((await readTrace(file)).map((r) => r.kind)).toEqual(['run.start', 'step', 'event', 'queued']);
  });

  it('names the line of a record that is not one, and why', async () => {
    const good = (await readFile(FIXTURE, 'utf8')).split('\n').slice(0, 2);
    const cases: [string, RegExp][] = [
      ['{"t": "2026-01-01T00:00:01.000Z", "kind": "step"', /: line 3: not JSON/],
      ['[1, 2]', /: line 3: not a JSON object$/],
      ['{"t":"2026-01-01T00:00:01.000Z","wall":"2026-11-28T10:00:00.000Z","kind":"gossip"}', /: line 3: unknown kind "gossip"$/],
      ['{"t":"yesterday","wall":"2026-11-28T10:00:00.000Z","kind":"event","instance":"a","event":"e"}', /: line 3: event: t must be an ISO 8601 time$/],
      ['{"t":"2026-01-01T00:00:01.000Z","wall":"2026-11-28T10:00:00.000Z","kind":"event","instance":"a"}', /: line 3: event: event is missing$/],
      ['{"t":"2026-01-01T00:00:01.000Z","wall":"2026-11-28T10:00:00.000Z","kind":"queued","instance":"a","id":"i","type":"Create","inboxes":"all"}', /: line 3: queued: inboxes must be a count or "followers"$/],
      [
        '{"t":"2026-01-01T00:00:01.000Z","wall":"2026-11-28T10:00:00.000Z","kind":"delivery","from":"a","to":"b","inbox":"i","id":null,"key":"k","type":"Create","outcome":"exploded","status":null,"latencyMs":1,"attempt":1}',
        /: line 3: delivery: outcome must be one of delivered, http-error, lost, partitioned, down, duplicated$/,
      ],
      [
        '{"t":"2026-01-01T00:00:01.000Z","wall":"2026-11-28T10:00:00.000Z","kind":"delivery","from":"a","to":"b","inbox":"i","id":null,"key":"k","type":"Create","outcome":"delivered","status":202,"latencyMs":"fast","attempt":1}',
        /: line 3: delivery: latencyMs must be a number$/,
      ],
    ];
    for (const [line, message] of cases) {
      const file = path.join(tmp, 'bad.jsonl');
      await writeFile(file, `${good.join('\n')}\n${line}\n`);
      const err = await readTrace(file).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TraceError);
      expect([(err as TraceError).line, (err as Error).message]).toEqual([3, expect.stringMatching(message)]);
    }
  });
});

describe('writeReport and roost lab report', () => {
  it('names the files after the trace', () => {
    expect(['runs/poll.trace.jsonl', 'a.jsonl', 'b.ndjson', 'c.trace', 'plain'].map(reportBaseName)).toEqual(['poll', 'a', 'b', 'c', 'plain']);
  });

  it('writes both files beside the trace, or into --out', async () => {
    const dir = path.join(tmp, 'beside');
    const trace = path.join(dir, 'poll.trace.jsonl');
    await writeReport(FIXTURE, dir); // creates the directory
    await writeFile(trace, await readFile(FIXTURE));
    const written = await writeReport(trace);
    expect([written.html, written.json]).toEqual([path.join(dir, 'poll.report.html'), path.join(dir, 'poll.summary.json')]);
    expect(await readFile(written.json, 'utf8')).toBe(stableJson(s));
    expect(await readFile(written.html, 'utf8')).toBe(renderReportHtml(s));
  });

  it('`roost lab report TRACE --out DIR` writes both files and exits 0, opening no database', async () => {
    const out = path.join(tmp, 'cli-out');
    const dataDir = path.join(tmp, 'no-data-dir');
    // A database that cannot be reached and a data directory that must stay unmade: the command needs neither.
    const env = { ROOST_DATA_DIR: dataDir, ROOST_DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' };
    const run = await runCli(['lab', 'report', FIXTURE, '--out', out], env);
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toBe(`OK: 3 of 4 assertion(s) passed, 21 delivery attempt(s)\n${path.join(out, 'poll-partition.report.html')}\n${path.join(out, 'poll-partition.summary.json')}\n`);
    expect((await readdir(out)).sort()).toEqual(['poll-partition.report.html', 'poll-partition.summary.json']);
    expect(JSON.parse(await readFile(path.join(out, 'poll-partition.summary.json'), 'utf8'))).toEqual(JSON.parse(stableJson(s)));
    expect(await readFile(path.join(out, 'poll-partition.report.html'), 'utf8')).toBe(renderReportHtml(s));
    expect(existsSync(dataDir)).toBe(false);

    const help = await runCli(['lab', '--help'], env);
    expect([help.code, help.stdout.split('\n').filter((l) => l.startsWith('  roost '))]).toEqual([
      0,
      ['  roost lab run SCENARIO [--seed N] [--out DIR] [--no-report]', '  roost lab serve SCENARIO [--port N]', '  roost lab report TRACE [--out DIR]'],
    ]);
  });

  it('exits non-zero naming the line of a malformed trace, and the file that is missing', async () => {
    const bad = path.join(tmp, 'broken.trace.jsonl');
    const lines = (await readFile(FIXTURE, 'utf8')).split('\n');
    await writeFile(bad, [...lines.slice(0, 4), '{"t": "2026-01-01T00:00:00.020Z", "kind": "delivery", ', ...lines.slice(5)].join('\n'));
    const run = await runCli(['lab', 'report', bad, '--out', path.join(tmp, 'broken-out')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^roost: lab report: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 5: not JSON \\(`));
    expect(run.stderr).not.toContain('    at ');
    expect(existsSync(path.join(tmp, 'broken-out'))).toBe(false);

    const missing = await runCli(['lab', 'report', path.join(tmp, 'nope.jsonl')]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/^roost: lab report: ENOENT: no such file or directory/)]);
    const usage = await runCli(['lab', 'report']);
    expect([usage.code, usage.stderr.split('\n')[0]]).toEqual([2, 'roost lab report: give exactly one TRACE file']);
  });
});
