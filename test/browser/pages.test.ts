/**
 * The public pages in a real Chromium: a profile, a status with media, a status with a poll, a
 * tag page and /about, at a phone's width and a desktop's, light and dark. Each loads under its
 * strict CSP with nothing refused, fits the width (no sideways scroll), passes axe-core with no
 * serious or critical violation, and its screenshot is checked: the size asked for, not blank,
 * and the page background of the colour scheme (white in light mode, the dark background in dark).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import axe from 'axe-core';
import sharp from 'sharp';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { defaultAvatarPng } from '../../src/lib/default-images.ts';
import { findChromium } from './find-chromium.ts';

let roost: TestRoost;
let browser: Browser;
const paths: Record<string, string> = {};

beforeAll(async () => {
  const executablePath = findChromium();
  roost = await startTestRoost({ instance: { title: 'Perch', rules: ['Be kind to birds'] } });
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const alice = await createTestUser(roost, 'alice');
  const bob = await createTestUser(roost, 'bob');
  await alice.api('/api/v1/accounts/update_credentials', {
    method: 'PATCH',
    body: {
      display_name: 'Alice Birder',
      note: 'I watch birds from my window and write down what I see. A rather long bio to wrap on a phone, with a link https://alice.example/notes/about-the-birds-i-have-seen-this-year',
      discoverable: true,
      fields_attributes: { 0: { name: 'Website', value: 'https://alice.example' }, 1: { name: 'Pronouns', value: 'she/her' } },
    },
  });
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(await defaultAvatarPng())], { type: 'image/png' }), 'bird.png');
  form.append('description', 'A small grey bird on a branch');
  const media = await alice.api('/api/v1/media', { body: form });
  const withMedia = await alice.api('/api/v1/statuses', { body: { status: 'A wren this morning #birds', media_ids: [media.body.id] } });
  const withPoll = await alice.api('/api/v1/statuses', { body: { status: 'Which did you see today? #birds', poll: { options: ['Wren', 'Robin', 'Neither'], expires_in: 3600 } } });
  await bob.api(`/api/v1/polls/${withPoll.body.poll.id}/votes`, { body: { choices: [0] } });
  await bob.api('/api/v1/statuses', { body: { status: 'Lovely! Mine was a robin.', in_reply_to_id: withMedia.body.id } });
  await alice.api('/api/v1/statuses', { body: { status: 'A content warning post', spoiler_text: 'Spoilers about birds' } });
  await settled(roost);
  paths.profile = '/@alice';
  paths.media = `/@alice/${withMedia.body.id}`;
  paths.poll = `/@alice/${withPoll.body.id}`;
  paths.tag = '/tags/birds';
  paths.about = '/about';
});
afterAll(async () => {
  await browser?.close();
  await roost?.close();
});

const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } } as const;
const BACKGROUND = { light: [255, 255, 255], dark: [0x15, 0x17, 0x1c] } as const;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

describe('public pages in Chromium', () => {
  it('the checks can fail: axe finds a missing alt and low contrast, the screenshot check sees a blank page', async () => {
    const page = await browser.newPage({ viewport: WIDTHS.phone });
    await page.setContent('<!doctype html><html lang="en"><head><title>x</title></head><body><main><h1 style="color:#ddd">faint</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="40" height="40"></main></body></html>');
    await page.evaluate(axe.source);
    const ids = (await page.evaluate(`axe.run(document).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id))`)) as string[];
    expect(ids).toEqual(expect.arrayContaining(['image-alt', 'color-contrast']));
    await page.setContent('<!doctype html><html><body style="background:#fff"></body></html>');
    const stats = await sharp(await page.screenshot({ type: 'png' })).stats();
    expect(stats.channels[0]!.stdev).toBe(0);
    await page.close();
  });

  for (const [widthName, viewport] of Object.entries(WIDTHS)) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`profile, status with media, status with poll, tag page and /about: ${widthName}, ${scheme}`, async () => {
        const context = await browser.newContext({ viewport, colorScheme: scheme, deviceScaleFactor: 1 });
        try {
          for (const [name, path] of Object.entries(paths)) {
            const page = await context.newPage();
            const refused: string[] = [];
            page.on('console', (m) => {
              if (m.type() === 'error') refused.push(m.text());
            });
            const failed: string[] = [];
            page.on('requestfailed', (r) => failed.push(r.url()));
            const res = await page.goto(roost.at(path), { waitUntil: 'load' });
            expect([name, res?.status()]).toEqual([name, 200]);
            expect([name, refused, failed]).toEqual([name, [], []]);
            // The post's picture (lazily loaded: `load` does not wait for it) comes, with its description.
            if (name === 'media') {
              // Polled with evaluate: waitForFunction's string form needs eval, which the page's CSP refuses.
              const loaded = `Array.from(document.images).some((i) => i.alt === 'A small grey bird on a branch' && i.complete && i.naturalWidth > 0)`;
              for (let i = 0; i < 150 && !(await page.evaluate(loaded)); i++) await page.waitForTimeout(100);
            }
            // The stylesheet applied (the CSP lets it in): the body is the stylesheet's.
            const layout = (await page.evaluate(`({
              sheets: document.styleSheets.length,
              maxWidth: getComputedStyle(document.body).maxWidth,
              scrollWidth: document.documentElement.scrollWidth,
              innerWidth: window.innerWidth,
              images: Array.from(document.images).map((i) => ({ alt: i.getAttribute('alt'), loaded: i.complete && i.naturalWidth > 0 })),
              h1: document.querySelectorAll('h1').length,
              main: document.querySelectorAll('main').length,
            })`)) as { sheets: number; maxWidth: string; scrollWidth: number; innerWidth: number; images: { alt: string | null; loaded: boolean }[]; h1: number; main: number };
            expect([name, layout.sheets, layout.maxWidth, layout.h1, layout.main]).toEqual([name, 1, '672px', 1, 1]);
            expect([name, layout.scrollWidth]).toEqual([name, layout.innerWidth]);
            for (const img of layout.images) expect(img.alt).not.toBeNull();
            if (name === 'media') expect(layout.images.some((i) => i.alt === 'A small grey bird on a branch' && i.loaded)).toBe(true);

            // axe-core, evaluated by the test (the page itself runs no script).
            await page.evaluate(axe.source);
            const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
              r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`)) as AxeViolation[];
            if (violations.length) console.log(`[axe] ${name} ${widthName} ${scheme}: ${JSON.stringify(violations)}`);
            const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
            expect([name, serious]).toEqual([name, []]);

            const shot = await page.screenshot({ type: 'png' });
            const image = sharp(shot);
            const meta = await image.metadata();
            expect([name, meta.width, meta.height]).toEqual([name, viewport.width, viewport.height]);
            const stats = await image.stats();
            // Not blank: text and images make the channels vary.
            expect(stats.channels[0]!.stdev).toBeGreaterThan(5);
            // The top-left corner is the page background of the scheme.
            const { data } = await sharp(shot).extract({ left: 2, top: 2, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
            expect([name, [...data.subarray(0, 3)]]).toEqual([name, [...BACKGROUND[scheme]]]);
            await page.close();
          }
        } finally {
          await context.close();
        }
      });
    }
  }
});
