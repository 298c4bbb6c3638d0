/**
 * The lab report's page: one HTML document with inline SVG plots drawn here (no charting library,
 * no script, nothing fetched: a Content-Security-Policy of `default-src 'none'` holds it to that),
 * each plot with a title, a description and a data table beside it, light and dark through
 * prefers-color-scheme. Every string that came from a trace goes through the escaping template
 * (src/lib/html-template.ts): activity types, hosts, assertion texts and details are remote- or
 * scenario-controlled.
 *
 * Every drawn datum (a bar, a curve) carries class="mark", so a test can count them.
 */
import { html, trustedHtml, type HtmlValue, type SafeHtml } from '../lib/html-template.ts';
import type { Distribution, LabSummary, LatencySeries, Outcomes, TimelineBin } from './report.ts';

// ---------------------------------------------------------------------------------------------
// Numbers as people read them

const trim = (x: number, digits: number): string => String(Number(x.toFixed(digits)));

/** 0.5 ms, 250 ms, 1.25 s, 2.5 min, 3 h, 7 d. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  const a = Math.abs(ms);
  if (a < 1_000) return `${trim(ms, 3)} ms`;
  if (a < 60_000) return `${trim(ms / 1_000, 2)} s`;
  if (a < 3_600_000) return `${trim(ms / 60_000, 2)} min`;
  if (a < 86_400_000) return `${trim(ms / 3_600_000, 2)} h`;
  return `${trim(ms / 86_400_000, 2)} d`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Round axis ticks from 0 to at least max: 0, step, 2·step … with step 1, 2 or 5 × 10^k. */
function countTicks(max: number, target = 4): number[] {
  if (max <= 0) return [0, 1];
  const raw = max / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const ticks = [];
  for (let v = 0; v < max + step; v += Math.max(1, step)) ticks.push(v);
  return ticks;
}

// ---------------------------------------------------------------------------------------------
// SVG pieces

const W = 720;
const M = { left: 60, right: 20, top: 16, bottom: 48 };
const f = (x: number): string => trim(x, 1);

interface PlotFrame {
  id: string;
  title: string;
  desc: string;
  height: number;
  body: SafeHtml | SafeHtml[];
}

/** The <svg>: role img, named by its own <title> and described by its <desc>. */
function svg(p: PlotFrame): SafeHtml {
  return html`<svg class="plot" id="${p.id}" role="img" aria-labelledby="${p.id}-title ${p.id}-desc" viewBox="0 0 ${W} ${p.height}" width="${W}" height="${p.height}">
<title id="${p.id}-title">${p.title}</title>
<desc id="${p.id}-desc">${p.desc}</desc>
${p.body}
</svg>`;
}

function empty(p: Omit<PlotFrame, 'body' | 'height'>, message: string): SafeHtml {
  return svg({ ...p, height: 80, body: html`<text class="label" x="${W / 2}" y="44" text-anchor="middle">${message}</text>` });
}

function yAxis(ticks: number[], y: (v: number) => number, label: (v: number) => string, right = W - M.right): SafeHtml[] {
  return ticks.map(
    (t) => html`<line class="grid" x1="${M.left}" x2="${right}" y1="${f(y(t))}" y2="${f(y(t))}"/><text class="label" x="${M.left - 6}" y="${f(y(t) + 4)}" text-anchor="end">${label(t)}</text>`,
  );
}

/** Latency axis ticks: 1, 2.5, 5 per decade to 10 s, then minutes, hours, days; the major ones when that is too many. */
const LOG_TICKS = [
  1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 21_600_000, 86_400_000,
  604_800_000,
];
const MAJOR_TICKS = [1, 10, 100, 1_000, 10_000, 60_000, 600_000, 3_600_000, 86_400_000, 604_800_000];

const DASHES = ['', '6 3', '2 3', '8 3 2 3', '', '6 3', '2 3', '8 3 2 3'];

// ---------------------------------------------------------------------------------------------
// The plots

/** Cumulative share of deliveries by latency, one curve per series, log-scaled latency. */
export function latencyCdfPlot(series: LatencySeries[], grouping: LabSummary['latencySeries']['grouping']): SafeHtml {
  const id = 'plot-latency-cdf';
  const title = 'Delivery latency, cumulative';
  const drawn = series.filter((s) => s.latency.count > 0);
  const per = grouping === 'link' ? 'per link' : grouping === 'destination-software' ? "per destination's software" : 'for the busiest links and all others';
  if (drawn.length === 0) return empty({ id, title, desc: 'No delivery was answered with a 2xx in this trace.' }, 'No deliveries to plot.');
  const lo = Math.max(1, Math.min(...drawn.map((s) => s.latency.min!)));
  const hi = Math.max(lo * 10, ...drawn.map((s) => s.latency.max!));
  const plotH = 220;
  const legendH = drawn.length * 18 + 8;
  const height = M.top + plotH + M.bottom + legendH;
  const pw = W - M.left - M.right;
  const x = (v: number): number => M.left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * pw;
  const y = (share: number): number => M.top + plotH - share * plotH;
  let ticks = LOG_TICKS.filter((t) => t >= lo && t <= hi);
  if (ticks.length > 8) ticks = ticks.filter((t) => MAJOR_TICKS.includes(t));
  if (ticks.length < 2) ticks = [lo, hi];
  const body: SafeHtml[] = [
    ...yAxis([0, 0.25, 0.5, 0.75, 1], y, (v) => `${v * 100} %`),
    ...ticks.map(
      (t) =>
        html`<line class="grid" x1="${f(x(t))}" x2="${f(x(t))}" y1="${M.top}" y2="${M.top + plotH}"/><text class="label" x="${f(x(t))}" y="${M.top + plotH + 18}" text-anchor="${x(t) > W - M.right - 30 ? 'end' : 'middle'}">${formatMs(t)}</text>`,
    ),
    html`<text class="label" x="${M.left + pw / 2}" y="${M.top + plotH + 36}" text-anchor="middle">latency (log scale)</text>`,
  ];
  drawn.forEach((s, i) => {
    const cdf = s.latency.cdf;
    // A staircase across the whole axis: 0 % left of the fastest, rising at each value (an
    // empirical CDF), 100 % right of the slowest; a link with one delivery is still a visible step.
    const d = `M ${M.left} ${f(y(0))} ${cdf.map((v, k) => `H ${f(x(v))} V ${f(y(k / (cdf.length - 1)))}`).join(' ')} H ${W - M.right}`;
    const ly = M.top + plotH + M.bottom + 8 + i * 18;
    body.push(
      html`<path class="mark series s${i % 8}" d="${d}" stroke-dasharray="${DASHES[i % 8]}"><title>${s.label}: median ${formatMs(s.latency.p50)}, p90 ${formatMs(s.latency.p90)}, ${plural(s.latency.count, 'delivery', 'deliveries')}</title></path>`,
      html`<line class="series s${i % 8}" x1="${M.left}" x2="${M.left + 28}" y1="${ly}" y2="${ly}" stroke-dasharray="${DASHES[i % 8]}"/><text class="legend" x="${M.left + 36}" y="${ly + 4}">${s.label} (median ${formatMs(s.latency.p50)}, ${plural(s.latency.count, 'delivery', 'deliveries')})</text>`,
    );
  });
  const desc = `Share of deliveries answered within a given latency, ${per}. ${drawn.map((s) => `${s.label}: median ${formatMs(s.latency.p50)}, 90th percentile ${formatMs(s.latency.p90)}`).join('; ')}.`;
  return svg({ id, title: `${title}, ${per}`, desc, height, body });
}

/** How many deliveries fell in each latency bucket (all links together). */
export function latencyHistogramPlot(d: Distribution): SafeHtml {
  const id = 'plot-latency-histogram';
  const title = 'Delivery latency histogram, all links';
  if (d.count === 0) return empty({ id, title, desc: 'No delivery was answered with a 2xx in this trace.' }, 'No deliveries to plot.');
  const plotH = 200;
  const height = M.top + plotH + M.bottom;
  const pw = W - M.left - M.right;
  const n = d.histogram.length;
  const bw = pw / n;
  const max = Math.max(...d.histogram.map((b) => b.count));
  const ticks = countTicks(max);
  const top = ticks[ticks.length - 1]!;
  const y = (v: number): number => M.top + plotH - (v / top) * plotH;
  const every = n > 12 ? 2 : 1;
  const body: SafeHtml[] = [...yAxis(ticks, y, String)];
  d.histogram.forEach((b, i) => {
    const x0 = M.left + i * bw;
    if (b.count > 0) {
      body.push(
        html`<rect class="mark bar s0" x="${f(x0 + 2)}" y="${f(y(b.count))}" width="${f(Math.max(1, bw - 4))}" height="${f(y(0) - y(b.count))}"><title>${bucketLabel(b)}: ${b.count}</title></rect>`,
      );
    }
    if (i % every === 0) body.push(html`<text class="label" x="${f(x0)}" y="${M.top + plotH + 16}" text-anchor="middle">${formatMs(b.fromMs)}</text>`);
  });
  const last = d.histogram[n - 1]!;
  if (last.toMs !== null && (n - 1) % every === 0) body.push(html`<text class="label" x="${f(M.left + pw)}" y="${M.top + plotH + 16}" text-anchor="end">${formatMs(last.toMs)}</text>`);
  body.push(html`<text class="label" x="${M.left + pw / 2}" y="${M.top + plotH + 36}" text-anchor="middle">latency bucket (lower edge); bar height: deliveries</text>`);
  const busiest = d.histogram.reduce((a, b) => (b.count > a.count ? b : a));
  const desc = `${plural(d.count, 'delivery', 'deliveries')} by latency bucket, from ${formatMs(d.min)} to ${formatMs(d.max)}; the fullest bucket is ${bucketLabel(busiest)} with ${busiest.count}.`;
  return svg({ id, title, desc, height, body });
}

function bucketLabel(b: { fromMs: number; toMs: number | null }): string {
  return b.toMs === null ? `${formatMs(b.fromMs)} or more` : `${formatMs(b.fromMs)} to under ${formatMs(b.toMs)}`;
}

const TIMELINE_CLASSES: { key: keyof TimelineBin; label: string; cls: string }[] = [
  { key: 'delivered', label: 'delivered (2xx)', cls: 'ok' },
  { key: 'duplicated', label: 'duplicated copies', cls: 'dup' },
  { key: 'failed', label: 'failed (lost, partitioned, down, HTTP error)', cls: 'bad' },
];

/** Delivery attempts over simulated time, stacked by outcome; a clock jump is a break in the axis. */
export function timelinePlot(s: LabSummary): SafeHtml {
  const id = 'plot-timeline';
  const title = 'Delivery attempts over simulated time';
  const { segments, binMs } = s.timeline;
  const bins = segments.flatMap((g) => g.bins);
  const max = Math.max(0, ...bins.map((b) => b.delivered + b.duplicated + b.failed));
  if (max === 0) return empty({ id, title, desc: 'No delivery attempt in this trace.' }, 'No delivery attempts to plot.');
  const plotH = 200;
  const legendH = 46;
  const height = M.top + plotH + M.bottom + legendH;
  const gap = 36;
  const pw = W - M.left - M.right - gap * (segments.length - 1);
  const bw = pw / bins.length;
  const ticks = countTicks(max);
  const top = ticks[ticks.length - 1]!;
  const y = (v: number): number => M.top + plotH - (v / top) * plotH;
  const runStart = Date.parse(s.run.start ?? segments[0]!.start);
  const body: SafeHtml[] = [...yAxis(ticks, y, String)];
  let x = M.left;
  segments.forEach((g, gi) => {
    const segStart = Date.parse(g.start);
    if (gi > 0) {
      const jump = s.clockJumps[gi - 1];
      body.push(
        html`<line class="jump" x1="${f(x - gap / 2)}" x2="${f(x - gap / 2)}" y1="${M.top}" y2="${M.top + plotH}"/><text class="label" x="${f(x - gap / 2)}" y="${M.top + plotH + 32}" text-anchor="middle">${jump ? `+${formatMs(jump.jumpMs)}` : ''}</text>`,
      );
    }
    body.push(html`<text class="label" x="${f(x)}" y="${M.top + plotH + 16}" text-anchor="start">${formatMs(segStart - runStart)}</text>`);
    g.bins.forEach((b, bi) => {
      let base = 0;
      for (const c of TIMELINE_CLASSES) {
        const v = b[c.key];
        if (v === 0) continue;
        const from = Date.parse(g.start) + bi * binMs - runStart;
        body.push(
          html`<rect class="mark bar ${c.cls}" x="${f(x + bi * bw + 1)}" y="${f(y(base + v))}" width="${f(Math.max(1, bw - 2))}" height="${f(y(base) - y(base + v))}"><title>${formatMs(from)} to ${formatMs(from + binMs)}: ${v} ${c.label}</title></rect>`,
        );
        base += v;
      }
    });
    // Faults inside this stretch of time, as a dashed line where they happened.
    const segEnd = Date.parse(g.end);
    for (const fault of s.faults) {
      const t = Date.parse(fault.t);
      if (t < segStart || t > segEnd || (gi + 1 < segments.length && t === segEnd && Date.parse(segments[gi + 1]!.start) === t)) continue;
      const fx = x + ((t - segStart) / binMs) * bw;
      body.push(html`<line class="fault" x1="${f(fx)}" x2="${f(fx)}" y1="${M.top}" y2="${M.top + plotH}"><title>${fault.fault}: ${fault.detail}</title></line>`);
    }
    x += g.bins.length * bw + gap;
  });
  const ly = M.top + plotH + M.bottom + 10;
  TIMELINE_CLASSES.forEach((c, i) => {
    const lx = M.left + [0, 130, 270][i]!;
    body.push(html`<rect class="bar ${c.cls}" x="${lx}" y="${ly - 9}" width="12" height="12"/><text class="legend" x="${lx + 18}" y="${ly + 2}">${c.label}</text>`);
  });
  body.push(
    html`<line class="fault" x1="${M.left + 6}" x2="${M.left + 6}" y1="${ly + 10}" y2="${ly + 24}"/><text class="legend" x="${M.left + 18}" y="${ly + 22}">a fault (partition, heal, crash, restart, link change)</text>`,
    html`<line class="jump" x1="${M.left + 336}" x2="${M.left + 336}" y1="${ly + 10}" y2="${ly + 24}"/><text class="legend" x="${M.left + 348}" y="${ly + 22}">the clock jumped (axis break)</text>`,
  );
  const totals = TIMELINE_CLASSES.map((c) => `${bins.reduce((a, b) => a + b[c.key], 0)} ${c.label}`).join(', ');
  const desc = `Delivery attempts in bins of ${formatMs(binMs)} of simulated time: ${totals}. ${
    segments.length > 1 ? `The clock jumped ${plural(segments.length - 1, 'time')}: each jump is a break in the time axis. ` : ''
  }${s.faults.length ? `${plural(s.faults.length, 'fault')} marked as dashed lines.` : ''}`;
  return svg({ id, title, desc, height, body });
}

/** Activities per type: distinct activities sent, and arrivals accepted at inboxes. */
export function activitiesPlot(byType: LabSummary['activities']['byType']): SafeHtml {
  const id = 'plot-activities';
  const title = 'Activities per type: sent and received';
  const types = Object.keys(byType);
  if (types.length === 0) return empty({ id, title, desc: 'No activity was sent or received in this trace.' }, 'No activities to plot.');
  const left = 170;
  const row = 34;
  const plotH = types.length * row;
  const height = M.top + plotH + M.bottom;
  const pw = W - left - M.right - 40;
  const max = Math.max(1, ...types.map((t) => Math.max(byType[t]!.sent, byType[t]!.received)));
  const ticks = countTicks(max);
  const top = ticks[ticks.length - 1]!;
  const x = (v: number): number => left + (v / top) * pw;
  const body: SafeHtml[] = ticks.map(
    (t) => html`<line class="grid" x1="${f(x(t))}" x2="${f(x(t))}" y1="${M.top}" y2="${M.top + plotH}"/><text class="label" x="${f(x(t))}" y="${M.top + plotH + 16}" text-anchor="middle">${t}</text>`,
  );
  types.forEach((type, i) => {
    const c = byType[type]!;
    const y0 = M.top + i * row;
    const name = type.length > 24 ? `${type.slice(0, 23)}…` : type;
    body.push(html`<text class="legend" x="${left - 8}" y="${y0 + row / 2 + 4}" text-anchor="end">${name}</text>`);
    for (const [k, v, cls, dy] of [['sent', c.sent, 's0', 4], ['received', c.received, 's1', 17]] as const) {
      if (v === 0) continue;
      body.push(
        html`<rect class="mark bar ${cls}" x="${left}" y="${y0 + dy}" width="${f(Math.max(1, x(v) - left))}" height="12"><title>${type}: ${v} ${k}</title></rect><text class="label" x="${f(x(v) + 4)}" y="${y0 + dy + 10}">${v}</text>`,
      );
    }
  });
  const ly = M.top + plotH + 36;
  body.push(
    html`<rect class="bar s0" x="${left}" y="${ly - 9}" width="12" height="12"/><text class="legend" x="${left + 18}" y="${ly + 2}">sent (distinct activities)</text>`,
    html`<rect class="bar s1" x="${left + 210}" y="${ly - 9}" width="12" height="12"/><text class="legend" x="${left + 228}" y="${ly + 2}">received (accepted at an inbox)</text>`,
  );
  const desc = `Per activity type, how many distinct activities were sent and how many arrivals inboxes accepted: ${types.map((t) => `${t} ${byType[t]!.sent} sent, ${byType[t]!.received} received`).join('; ')}.`;
  return svg({ id, title, desc, height, body });
}

// ---------------------------------------------------------------------------------------------
// Tables

function table(caption: string, head: string[], rows: HtmlValue[][], numeric: boolean[] = []): SafeHtml {
  // Focusable and named: a wide table scrolls sideways, and a keyboard must be able to scroll it.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table: ${caption}"><table>
<caption>${caption}</caption>
<thead><tr>${head.map((h, i) => html`<th scope="col"${numeric[i] ? trustedHtml(' class="num"') : ''}>${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c, i) => (i === 0 ? html`<th scope="row">${c}</th>` : html`<td${numeric[i] ? trustedHtml(' class="num"') : ''}>${c}</td>`))}</tr>`)}</tbody>
</table></div>`;
}

/** A table folded away when long, so 250 links do not bury the plots. */
function folded(label: string, content: SafeHtml, rows: number, openUpTo = 0): SafeHtml {
  return rows <= openUpTo ? content : html`<details><summary>${label}</summary>${content}</details>`;
}

const DIST_HEAD = ['count', 'min', 'p50', 'p90', 'p99', 'max', 'mean'];
const distCells = (d: Distribution): HtmlValue[] => [d.count, formatMs(d.min), formatMs(d.p50), formatMs(d.p90), formatMs(d.p99), formatMs(d.max), formatMs(d.mean)];
const NUM7 = [false, true, true, true, true, true, true, true];

function httpErrors(o: Outcomes): string {
  const by = Object.entries(o.httpErrorByStatus).map(([s, n]) => `${s}×${n}`);
  return by.length ? `${o.httpError} (${by.join(', ')})` : String(o.httpError);
}

// ---------------------------------------------------------------------------------------------
// The page

const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1d21; --muted: #4a4f59; --grid: #d5d8de; --rule: #c3c7cf;
  --ok: #1a7f37; --bad: #b3261e; --dup: #8a5a00;
  --c0: #1f5fae; --c1: #c2410c; --c2: #15803d; --c3: #7e22ce; --c4: #a16207; --c5: #0e7490; --c6: #be185d; --c7: #4b5563; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171c; --fg: #e9eaee; --muted: #b4b8c2; --grid: #343946; --rule: #4a505e;
    --ok: #4ade80; --bad: #ff8a80; --dup: #fbbf24;
    --c0: #7cb3ff; --c1: #fb923c; --c2: #4ade80; --c3: #c4a1ff; --c4: #facc15; --c5: #22d3ee; --c6: #f472b6; --c7: #cbd5e1; }
}
html { background: var(--bg); color: var(--fg); }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
main { max-width: 760px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05rem; }
.verdict { font-weight: 600; }
.passed { color: var(--ok); }
.failed { color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border-bottom: 1px solid var(--rule); padding: .2rem .6rem .2rem 0; text-align: left; vertical-align: top; overflow-wrap: break-word; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
details { margin: .5rem 0 1rem; }
summary { cursor: pointer; }
figure { margin: 1rem 0; }
svg.plot { display: block; width: 100%; height: auto; max-width: 720px; font-size: 12px; }
svg .label { fill: var(--muted); }
svg .legend { fill: var(--fg); }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .series { fill: none; stroke-width: 2.5; }
svg .jump { stroke: var(--muted); stroke-width: 2; stroke-dasharray: 2 4; }
svg .fault { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .bar.ok { fill: var(--c0); } svg .bar.dup { fill: var(--dup); } svg .bar.bad { fill: var(--bad); }
${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `svg .series.s${i} { stroke: var(--c${i}); } svg .bar.s${i} { fill: var(--c${i}); }`).join('\n')}
`;

export function renderPage(s: LabSummary): string {
  const name = s.run.scenario ?? 'an unnamed run';
  const a = s.assertions;
  const total = a.passed + a.failed;
  const verdict =
    total === 0
      ? html`<p class="verdict">No assertions in this trace.</p>`
      : a.failed === 0
        ? html`<p class="verdict passed">✓ ${total === 1 ? 'The assertion' : `All ${total} assertions`} passed.</p>`
        : html`<p class="verdict failed">✗ ${a.failed} of ${plural(total, 'assertion')} failed.</p>`;
  const seriesLabel = s.latencySeries.grouping === 'link' ? 'Link' : s.latencySeries.grouping === 'destination-software' ? "Destination's software" : 'Link';

  const run = html`<section aria-labelledby="h-run"><h2 id="h-run">The run</h2>
<dl class="facts">
<dt>Scenario</dt><dd>${name}</dd>
<dt>Seed</dt><dd>${s.run.seed ?? '–'}</dd>
<dt>Instances</dt><dd>${s.run.instances.length}</dd>
<dt>Simulated time</dt><dd>${formatMs(s.run.simulatedMs)} (${s.run.start ?? '–'} to ${s.run.end ?? '–'})</dd>
<dt>Wall time</dt><dd>${formatMs(s.run.wallMs)}</dd>
<dt>Trace</dt><dd>${plural(s.run.records, 'record')}${s.run.complete ? '' : ', no run.end record: the run did not finish, or the trace was cut'}</dd>
<dt>Steps</dt><dd>${s.steps.total}${s.steps.failed.length ? `, ${s.steps.failed.length} failed` : ''}</dd>
<dt>Deliveries</dt><dd>${plural(s.deliveries.attempts, 'attempt')} for ${plural(s.deliveries.activities, 'activity', 'activities')} on ${plural(s.links.length, 'link')}; ${s.deliveries.outcomes.delivered} delivered, ${s.deliveries.undelivered} never delivered</dd>
</dl>
${folded(
  `Instances (${s.run.instances.length})`,
  table('Instances', ['Host', 'Software'], s.run.instances.map((i) => [i.name, i.software])),
  s.run.instances.length,
  12,
)}
</section>`;

  const th = s.threads;
  const threads = th.rows.length
    ? html`<section aria-labelledby="h-threads"><h2 id="h-threads">Threads</h2>
<p>At the run's end, readers saw ${th.known} of the ${th.total} public replies posted below the scenario's threads, counted on every Roost: ${((th.missingShare ?? 0) * 100).toFixed(1)} % missing.</p>
${table(
  'Replies a reader sees, per thread and server',
  ['Thread', 'Server', 'Seen', 'Posted', 'Missing'],
  th.rows.map((r) => [r.status, r.instance, r.known, r.total, r.total - Math.min(r.known, r.total)]),
  [false, false, true, true, true],
)}
</section>`
    : '';

  const assertions = html`<section aria-labelledby="h-assertions"><h2 id="h-assertions">Assertions</h2>
${verdict}
${
  a.list.length
    ? table(
        'Assertions in the order they were checked',
        ['Line', 'Assertion', 'Result', 'Converged after', 'Detail'],
        a.list.map((x) => [x.line, x.text, x.ok ? html`<span class="passed">✓ passed</span>` : html`<span class="failed">✗ failed</span>`, formatMs(x.convergedMs), x.detail]),
        [true],
      )
    : ''
}
${
  s.convergence.count
    ? html`<p>Convergence over the ${plural(s.convergence.count, 'assertion')} that held: median ${formatMs(s.convergence.p50)}, 90th percentile ${formatMs(s.convergence.p90)}, slowest ${formatMs(s.convergence.max)}.</p>`
    : ''
}
</section>`;

  const series = s.latencySeries.series;
  const latency = html`<section aria-labelledby="h-latency"><h2 id="h-latency">Delivery latency</h2>
<p>Each attempt's latency is the simulated time from sending to the 2xx answer (latency, jitter and slow inboxes included); duplicated copies are left out.
${s.latencySeries.grouping === 'link' ? '' : ` With ${s.links.length} links, the curves group them ${s.latencySeries.grouping === 'destination-software' ? "by the destination's software" : 'as the 7 busiest and all others'}; every link is in the outcomes table below.`}</p>
<h3>Cumulative</h3>
<figure>${latencyCdfPlot(series, s.latencySeries.grouping)}</figure>
${folded(
  'Data table: latency per series',
  table('Delivery latency per series', [seriesLabel, 'links', ...DIST_HEAD], series.map((x) => [x.label, x.links, ...distCells(x.latency)]), [false, true, true, true, true, true, true, true, true]),
  series.length,
)}
<h3>Histogram</h3>
<figure>${latencyHistogramPlot(s.deliveries.latency)}</figure>
${folded(
  'Data table: deliveries per latency bucket',
  table('Deliveries per latency bucket, all links', ['Bucket', 'Deliveries'], s.deliveries.latency.histogram.map((b) => [bucketLabel(b), b.count]), [false, true]),
  s.deliveries.latency.histogram.length,
)}
${table('All links together', ['Measure', ...DIST_HEAD], [
  ['latency of a 2xx attempt', ...distCells(s.deliveries.latency)],
  ['first delivery (retries included)', ...distCells(s.deliveries.firstDelivery)],
], NUM7)}
</section>`;

  const timeline = html`<section aria-labelledby="h-timeline"><h2 id="h-timeline">Deliveries over simulated time</h2>
<figure>${timelinePlot(s)}</figure>
${folded(
  'Data table: delivery attempts per time bin',
  table(
    `Delivery attempts per ${formatMs(s.timeline.binMs)} of simulated time`,
    ['From', 'Delivered', 'Duplicated', 'Failed'],
    s.timeline.segments.flatMap((g) => g.bins.map((b, i) => [isoPlus(g.start, i * s.timeline.binMs), b.delivered, b.duplicated, b.failed])),
    [false, true, true, true],
  ),
  s.timeline.segments.reduce((n, g) => n + g.bins.length, 0),
)}
<h3>Faults and clock jumps</h3>
${
  s.faults.length + s.clockJumps.length === 0
    ? html`<p>None.</p>`
    : html`<ol>${[
        ...s.faults.map((x) => ({ t: x.t, text: html`<strong>${x.fault}</strong> ${x.detail}` })),
        ...s.clockJumps.map((c) => ({ t: c.t, text: html`<strong>clock</strong> jumped ${formatMs(c.jumpMs)}, from ${c.from} to ${c.to}` })),
      ]
        .map((e, i) => ({ ...e, i }))
        .sort((p, q) => (p.t < q.t ? -1 : p.t > q.t ? 1 : p.i - q.i))
        .map((e) => html`<li><time>${e.t}</time>: ${e.text}</li>`)}</ol>`
}
</section>`;

  const links = html`<section aria-labelledby="h-links"><h2 id="h-links">Delivery outcomes per link</h2>
${folded(
  `All ${plural(s.links.length, 'link')}`,
  table(
    'Delivery outcomes and latency per link',
    ['From → to', 'attempts', 'delivered', 'HTTP error', 'lost', 'partitioned', 'down', 'duplicated', 'never delivered', 'p50', 'p90', 'p99'],
    s.links.map((l) => [
      `${l.from} → ${l.to}`,
      l.attempts,
      l.outcomes.delivered,
      httpErrors(l.outcomes),
      l.outcomes.lost,
      l.outcomes.partitioned,
      l.outcomes.down,
      l.outcomes.duplicated,
      l.undelivered,
      formatMs(l.latency.p50),
      formatMs(l.latency.p90),
      formatMs(l.latency.p99),
    ]),
    [false, true, true, true, true, true, true, true, true, true, true, true],
  ),
  s.links.length,
  20,
)}
${
  s.fetches.length
    ? folded(
        `Fetches (${s.fetches.length} links)`,
        table(
          'Fetches across the network (actors, keys, WebFinger, objects)',
          ['From → to', 'ok', 'HTTP error', 'lost', 'partitioned', 'down'],
          s.fetches.map((x) => [`${x.from} → ${x.to}`, x.ok, x.httpError, x.lost, x.partitioned, x.down]),
          [false, true, true, true, true, true],
        ),
        s.fetches.length,
        20,
      )
    : ''
}
</section>`;

  const types = Object.entries(s.activities.byType);
  const activities = html`<section aria-labelledby="h-activities"><h2 id="h-activities">Activities</h2>
<figure>${activitiesPlot(s.activities.byType)}</figure>
${folded(
  'Data table: activities per type',
  table('Activities per type', ['Type', 'sent', 'delivery attempts', 'received'], types.map(([t, c]) => [t, c.sent, c.deliveries, c.received]), [false, true, true, true]),
  types.length,
)}
${folded(
  'Activities per instance',
  table(
    'Activities per instance and type',
    ['Instance', 'Type', 'sent', 'received'],
    Object.entries(s.activities.byInstance).flatMap(([inst, c]) =>
      [...new Set([...Object.keys(c.sent), ...Object.keys(c.received)])].sort().map((t) => [inst, t, c.sent[t] ?? 0, c.received[t] ?? 0]),
    ),
    [false, false, true, true],
  ),
  Object.keys(s.activities.byInstance).length,
  6,
)}
</section>`;

  const eventRows = Object.entries(s.events).flatMap(([inst, m]) => Object.entries(m).map(([e, n]) => [inst, e, n] as HtmlValue[]));
  const causedRows = Object.entries(s.caused).flatMap(([inst, m]) => Object.entries(m).map(([e, n]) => [inst, e, n] as HtmlValue[]));
  const appliedRows = Object.entries(s.applied).map(([inst, x]) => [inst, x.ok, x.failed, Object.entries(x.errors).map(([e, n]) => `${e} (×${n})`).join('; ')] as HtmlValue[]);
  const queuedRows = Object.entries(s.queued).flatMap(([inst, m]) => Object.entries(m).map(([t, n]) => [inst, t, n] as HtmlValue[]));
  const events = html`<section aria-labelledby="h-events"><h2 id="h-events">Events per instance</h2>
${queuedRows.length ? folded('Activities queued for delivery', table('Activities queued for delivery per instance', ['Instance', 'Type', 'count'], queuedRows, [false, false, true]), queuedRows.length, 30) : ''}
${appliedRows.length ? folded('Inbound activities applied', table('Inbound activities applied per instance', ['Instance', 'applied', 'failed', 'Failures'], appliedRows, [false, true, true, false]), appliedRows.length, 30) : ''}
${eventRows.length ? folded('Events per instance', table('Facts committed per instance', ['Instance', 'Event', 'count'], eventRows, [false, false, true]), eventRows.length, 30) : html`<p>None.</p>`}
${causedRows.length ? folded('Caused activities', table('Outbound activities caused by inbound ones', ['Instance', 'Inbound → outbound', 'count'], causedRows, [false, false, true]), causedRows.length, 30) : ''}
</section>`;

  const steps = s.steps.failed.length
    ? html`<section aria-labelledby="h-steps"><h2 id="h-steps">Steps that failed</h2>
${table('Steps that failed', ['Line', 'Step', 'Detail'], s.steps.failed.map((x) => [x.line, x.step, x.detail ?? '']), [true])}
</section>`
    : '';

  return `<!doctype html>
${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>Lab report: ${name}</title>
<style>${trustedHtml(STYLE)}</style>
</head>
<body>
<main>
<h1>Lab report: ${name}</h1>
${run}
${assertions}
${threads}
${steps}
${latency}
${timeline}
${links}
${activities}
${events}
</main>
</body>
</html>
`}`;
}

function isoPlus(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}
