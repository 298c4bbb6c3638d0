/**
 * The README's "first post in two minutes", run as written: the shell block after the
 * `first-post` marker, line by line in one bash, against a real `roost start` on the embedded
 * database (a fresh data directory; the port the README says, 3000, swapped for a free one).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-walkthrough-'));
let server: ChildProcess | null = null;
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** The README's walkthrough: the lines of the first ```sh block after the marker. */
export function walkthrough(readme: string): string[] {
  const after = readme.slice(readme.indexOf('<!-- first-post'));
  const block = /```sh\n([\s\S]*?)```/.exec(after);
  if (!block) throw new Error('no first-post block in README.md');
  return block[1]!.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const env = (port: number) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_DATA_DIR: dataDir, ROOST_PORT: String(port), ROOST_LOG_LEVEL: 'warn' });

describe('the README walkthrough', () => {
  it('reaches a first post, the home timeline and the actor, as written', async () => {
    const lines = walkthrough(readFileSync(path.join(root, 'README.md'), 'utf8'));
    expect(lines.length).toBeGreaterThanOrEqual(4);
    const port = await freePort();
    server = spawn('npm', ['start', '--silent'], { cwd: root, env: { ...env(port), ROOST_LOG_LEVEL: 'info' } });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready: ${log}`)), 120_000);
      server!.stdout!.on('data', (d) => {
        log += d;
        if (/listening on http/.test(log)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server!.stderr!.on('data', (d) => (log += d));
      server!.once('exit', (code) => reject(new Error(`roost start exited ${code}: ${log}`)));
    });
    // Each line's output separated by a marker, in one shell (TOKEN=… carries to the next lines).
    const script = lines.map((l, i) => `${l.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)}\necho; echo "@@@ ${i}"`).join('\n');
    const shell = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: root, env: env(port) });
    let out = '';
    let err = '';
    shell.stdout.on('data', (d) => (out += d));
    shell.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => shell.on('close', r));
    expect(code, err).toBe(0);
    const outputs = out.split(/\n@@@ \d+\n/).map((o) => o.trim());
    const json = (i: number) => JSON.parse(outputs[i]!) as Record<string, any>;
    const created = lines.findIndex((l) => l.includes('accounts create'));
    expect(outputs[created]).toMatch(/New password: \S+$/);
    const posted = json(lines.findIndex((l) => l.includes('/api/v1/statuses')));
    expect(posted).toMatchObject({ content: '<p>Hello, fediverse!</p>', visibility: 'public', account: { username: 'alice' } });
    const home = json(lines.findIndex((l) => l.includes('/timelines/home'))) as unknown as { id: string }[];
    expect(home.map((s) => s.id)).toEqual([posted.id]);
    const actor = json(lines.findIndex((l) => l.includes('/users/alice')));
    expect(actor).toMatchObject({ type: 'Person', preferredUsername: 'alice' });
  }, 300_000);
});
