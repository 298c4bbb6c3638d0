/**
 * The lab report's page in a real Chromium, opened from the file `writeReport` wrote (as a
 * researcher would): the hand-written trace and a 250-server fan-out, light and dark. Each plot's
 * SVG is laid out (a non-zero box) with the number of marks its data calls for, nothing is fetched
 * and the page's own policy refuses nothing, and axe-core finds no violation.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import axe from 'axe-core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeReport, type LabSummary } from '../../src/lab/report.ts';
import { fanOutTrace } from '../fixtures/lab/fan-out.ts';
import { findChromium } from './find-chromium.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/lab/poll-partition.trace.jsonl');
let browser: Browser;
let tmp: string;
const reports: Record<string, { html: string; summary: LabSummary }> = {};

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: findChromium(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'roost-lab-browser-'));
  reports.poll = await writeReport(FIXTURE, tmp);
  const wide = path.join(tmp, 'fan-out.trace.jsonl');
  await writeFile(wide, fanOutTrace(250).map((r) => JSON.stringify(r)).join('\n'));
  reports.wide = await writeReport(wide);
});
afterAll(async () => {
  await browser?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** The marks each plot should draw, from the summary: a curve per series, a bar per non-empty bucket or count. */
function expectedMarks(s: LabSummary): Record<string, number> {
  const bins = s.timeline.segments.flatMap((g) => g.bins);
  return {
    'plot-latency-cdf': s.latencySeries.series.filter((x) => x.latency.count > 0).length,
    'plot-latency-histogram': s.deliveries.latency.histogram.filter((b) => b.count > 0).length,
    'plot-timeline': bins.reduce((n, b) => n + [b.delivered, b.duplicated, b.failed].filter((v) => v > 0).length, 0),
    'plot-activities': Object.values(s.activities.byType).reduce((n, c) => n + [c.sent, c.received].filter((v) => v > 0).length, 0),
  };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

describe('the lab report in Chromium', () => {
  it('the expected marks are what the two traces hold', () => {
    expect(expectedMarks(reports.poll!.summary)).toEqual({ 'plot-latency-cdf': 5, 'plot-latency-histogram': 3, 'plot-timeline': 12, 'plot-activities': 11 });
    // 250 links drawn as four curves, one per destination software.
    expect(expectedMarks(reports.wide!.summary)['plot-latency-cdf']).toBe(4);
  });

  for (const name of ['poll', 'wide'] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`${name === 'poll' ? 'the hand-written trace' : '250 links'}, ${scheme}: plots laid out with their marks, nothing fetched, no axe violation`, async () => {
        const report = reports[name]!;
        const context = await browser.newContext({ viewport: { width: 1024, height: 900 }, colorScheme: scheme, deviceScaleFactor: 1 });
        try {
          const page = await context.newPage();
          const requests: string[] = [];
          page.on('request', (r) => requests.push(r.url()));
          const errors: string[] = [];
          page.on('console', (m) => {
            if (m.type() === 'error') errors.push(m.text());
          });
          const url = pathToFileURL(report.html).href;
          await page.goto(url, { waitUntil: 'load' });
          expect([requests, errors]).toEqual([[url], []]);

          const plots = (await page.evaluate(`Array.from(document.querySelectorAll('svg')).map((svg) => {
            const box = svg.getBoundingClientRect();
            const marks = Array.from(svg.querySelectorAll('.mark'));
            return {
              id: svg.id,
              width: box.width,
              height: box.height,
              marks: marks.length,
              drawnMarks: marks.filter((m) => { const b = m.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length,
              title: svg.querySelector(':scope > title')?.textContent ?? null,
              desc: svg.querySelector(':scope > desc')?.textContent ?? null,
            };
          })`)) as { id: string; width: number; height: number; marks: number; drawnMarks: number; title: string | null; desc: string | null }[];
          const expected = expectedMarks(report.summary);
          expect(plots.map((p) => [p.id, p.marks])).toEqual(Object.entries(expected));
          for (const p of plots) {
            expect([p.id, p.width > 100, p.height > 50]).toEqual([p.id, true, true]);
            // Every mark is drawn with a size (a curve that rises, a bar with height).
            expect([p.id, p.drawnMarks]).toEqual([p.id, p.marks]);
            expect([p.id, p.title?.length, p.desc?.length]).toEqual([p.id, expect.any(Number), expect.any(Number)]);
          }
          // The page fits its width: plots scale down instead of scrolling sideways.
          expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
          // The colour scheme is followed: the page background is white in light mode, dark in dark mode.
          const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
          expect(bg).toBe(scheme === 'light' ? 'rgb(255, 255, 255)' : 'rgb(21, 23, 28)');

          await page.evaluate(axe.source);
          const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
            r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`)) as AxeViolation[];
          expect(violations).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }

  it('at a phone width the plots shrink to fit and the page does not scroll sideways', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(pathToFileURL(reports.poll!.html).href, { waitUntil: 'load' });
      const widths = (await page.evaluate(`Array.from(document.querySelectorAll('svg')).map((s) => s.getBoundingClientRect().width)`)) as number[];
      expect(widths).toHaveLength(4);
      for (const w of widths) expect(w).toBeLessThanOrEqual(390);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    } finally {
      await page.close();
    }
  });
});
