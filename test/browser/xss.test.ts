/**
 * The XSS corpus rendered in a real browser, the way Mastodon's web client renders a bio and field
 * values (as HTML, through innerHTML): what a hostile peer sent through the real inbox, as served
 * by the real API, runs nothing in Chromium. The raw corpus in the same page is the control: it
 * does run, so the detector works.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { AccountSchema } from '../../src/db/entities/index.ts';
import { findChromium } from './find-chromium.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';


const CORPUS = [
  '<img src=x onerror=alert(1)>',
  '<IMG SRC=x oNeRrOr="alert(2)">',
  '<svg><image href=x onerror=alert(3)></image></svg>',
  '<video><source onerror="alert(4)"></video>',
  '<details open ontoggle=alert(5)>x</details>',
  '<a href="javascript:alert(6)" id="js-link">click</a>',
  '<a href="jav&#x09;ascript:alert(7)">click</a>',
  '<iframe srcdoc="<script>parent.alert(8)</script>"></iframe>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(9)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(10)>">',
  '<object data="data:text/html,<script>alert(11)</script>"></object>',
  '<body onload=alert(12)>',
  '<style>@import "javascript:alert(13)";</style>',
  '<input autofocus onfocus=alert(14)>',
];

let roost: TestRoost;
let peer: FakePeer;
let browser: Browser;

beforeAll(async () => {
  const executablePath = findChromium(); // throws at once, before any server starts, when there is none
  [roost, peer] = await Promise.all([startTestRoost(), startFakePeer()]);
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([roost?.close(), peer?.close()]);
});

/** Renders each HTML string into its own div and returns what ran (alert arguments) and what links point at. */
async function render(htmls: string[]): Promise<{ alerts: string[]; hrefs: string[]; handlers: string[] }> {
  const page = await browser.newPage();
  const alerts: string[] = [];
  page.on('dialog', async (d) => {
    alerts.push(d.message());
    await d.dismiss();
  });
  await page.setContent('<!doctype html><html><body></body></html>');
  // Browser-side code as strings: this project's TypeScript has no DOM types.
  await page.evaluate(`for (const html of ${JSON.stringify(htmls)}) {
    const div = document.createElement('div');
    div.innerHTML = html;
    document.body.append(div);
  }`);
  // Click every link (a javascript: one would run) and give onerror/ontoggle/onfocus time to fire.
  await page.evaluate(`for (const a of document.querySelectorAll('a')) a.click()`);
  await page.waitForTimeout(700);
  const found = (await page.evaluate(`({
    hrefs: Array.from(document.querySelectorAll('[href],[src],[data],[action],[srcdoc]')).map((e) => e.outerHTML),
    handlers: Array.from(document.querySelectorAll('*')).flatMap((e) => Array.from(e.attributes).filter((a) => /^on/i.test(a.name)).map((a) => e.tagName + ' ' + a.name)),
  })`)) as { hrefs: string[]; handlers: string[] };
  await page.close();
  return { alerts, ...found };
}

describe('the XSS corpus in Chromium', () => {
  it('runs nothing once it came through the inbox and the API; the raw corpus does run', async () => {
    peer.actor = {
      name: 'browser check',
      summary: CORPUS.join('<br>'),
      attachment: CORPUS.map((value, i) => ({ type: 'PropertyValue', name: `b${i}`, value })),
    };
    const { '@context': _c, ...object } = peer.actorJson();
    const res = await peer.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${peer.base}/updates/browser`, type: 'Update', actor: peer.actorId, object });
    expect(res.status).toBe(202);
    const row = await eventually(
      async () => roost.services.db.em().findOne(AccountSchema, { uri: peer.actorId, displayName: 'browser check' }, { refresh: true }),
      15_000,
      'the Update(Person)',
    );
    const served = (await (await fetch(roost.at(`/api/v1/accounts/${row.id}`))).json()) as { note: string; fields: { value: string }[] };
    expect(served.fields).toHaveLength(CORPUS.length);

    const control = await render(CORPUS);
    expect(control.alerts.length).toBeGreaterThan(0);
    expect(control.handlers.length).toBeGreaterThan(0);

    const safe = await render([served.note, ...served.fields.map((f) => f.value)]);
    expect(safe.alerts).toEqual([]);
    expect(safe.handlers).toEqual([]);
    expect(safe.hrefs).toEqual([]);
  });
});
