/**
 * `npm test` needs no browser; `npm run test:browser` finds Chromium by ROOST_CHROMIUM, PATH or the
 * usual install paths, and fails at once with a message that says what to do.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findChromium, ChromiumNotFoundError } from './browser/find-chromium.ts';

const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'roost-chromium-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeBrowser(sub: string, name: string): string {
  mkdirSync(path.join(dir, sub), { recursive: true });
  const file = path.join(dir, sub, name);
  writeFileSync(file, '#!/bin/sh\necho fake\n');
  chmodSync(file, 0o755);
  return file;
}

describe('findChromium', () => {
  it('takes ROOST_CHROMIUM first, then PATH in the order of the usual names, then the install paths', () => {
    const onPath = fakeBrowser('bin', 'chromium-browser');
    const chrome = fakeBrowser('bin2', 'google-chrome');
    const explicit = fakeBrowser('elsewhere', 'my-chrome');
    const snap = fakeBrowser('snap', 'chromium');
    const PATH = [path.join(dir, 'bin2'), path.join(dir, 'bin')].join(path.delimiter);
    expect(findChromium({ PATH, ROOST_CHROMIUM: explicit }, [])).toBe(explicit);
    expect(findChromium({ PATH }, [])).toBe(onPath); // chromium-browser before google-chrome
    expect(findChromium({ PATH: path.join(dir, 'bin2') }, [])).toBe(chrome);
    expect(findChromium({ PATH: '' }, [path.join(dir, 'nothing'), snap])).toBe(snap);
  });

  it('says what to do when there is none, or when ROOST_CHROMIUM is wrong', () => {
    expect(() => findChromium({ PATH: path.join(dir, 'empty') }, [])).toThrow(ChromiumNotFoundError);
    expect(() => findChromium({ PATH: '' }, [])).toThrow(/No Chromium found: .*set ROOST_CHROMIUM/);
    expect(() => findChromium({ PATH: '', ROOST_CHROMIUM: path.join(dir, 'missing') }, [])).toThrow(
      `ROOST_CHROMIUM=${path.join(dir, 'missing')} is not an executable file`,
    );
  });

  it('npm run test:browser stops at once without a browser, naming the problem', async () => {
    const t0 = Date.now();
    const res = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('npm', ['run', 'test:browser'], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_CHROMIUM: path.join(dir, 'missing') },
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(res.code).not.toBe(0);
    expect(res.out).toContain(`ROOST_CHROMIUM=${path.join(dir, 'missing')} is not an executable file`);
    expect(Date.now() - t0).toBeLessThan(30_000);
  }, 60_000);
});
