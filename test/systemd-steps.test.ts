/**
 * "As a service (systemd)" in docs/running.md, run as written where a test can: the environment
 * file made by the document's own command, the unit's ExecStart started the way systemd starts it
 * (the unit's WorkingDirectory, only the EnvironmentFile's variables and a bare PATH: no HOME, no
 * npx), the document's CLI line answered by the running server, and the stop within the unit's
 * TimeoutStopSec. What a test must not do to the machine is checked, not run: the system user
 * (useradd), sudo, and the systemctl calls; the paths and names they use must agree with the unit.
 */
import { describe, it, expect } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const doc = readFileSync(path.join(root, 'docs/running.md'), 'utf8');
const section = doc.slice(doc.indexOf('### As a service (systemd)'), doc.indexOf('### Backups'));
const blocks = [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], text: m[2]! }));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The unit file's [Service] keys. */
function unitService(ini: string): Record<string, string> {
  const out: Record<string, string> = {};
  let inService = false;
  for (const line of ini.split('\n')) {
    const t = line.trim();
    if (t.startsWith('[')) inService = t === '[Service]';
    else if (inService && t && !t.startsWith('#')) {
      const i = t.indexOf('=');
      out[t.slice(0, i)] = t.slice(i + 1);
    }
  }
  return out;
}

/** An EnvironmentFile read as systemd reads it: KEY=VALUE lines, comments and blanks skipped. */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const i = t.indexOf('=');
    env[t.slice(0, i)] = t.slice(i + 1);
  }
  return env;
}

describe('the systemd steps of docs/running.md', () => {
  it('are three blocks whose user, paths and environment file agree with one another', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['sh', 'ini', 'sh']);
    const [setup, unit, cli] = [blocks[0]!, blocks[1]!, blocks[2]!];
    const service = unitService(unit.text);
    expect(setup.text).toContain(`useradd --system --create-home --home-dir /srv/roost --shell /usr/sbin/nologin ${service.User}`);
    expect(setup.text).toContain(`sudo -u ${service.User} git clone <this repository> ${service.WorkingDirectory}`);
    expect(setup.text).toContain(`cd ${service.WorkingDirectory} && sudo -u ${service.User} npm ci --omit=dev`);
    expect(setup.text).toContain(`sudo tee ${service.EnvironmentFile}`);
    expect(service.ExecStart).toBe(`${service.WorkingDirectory}/node_modules/.bin/node src/roost.mjs start`);
    expect(cli.text).toContain(`sudo -u ${service.User} sh -c 'set -a; . ${service.EnvironmentFile}; cd ${service.WorkingDirectory} && exec node_modules/.bin/node src/roost.mjs`);
    expect(Number(service.TimeoutStopSec)).toBeGreaterThan(0);
  });

  it('start the service, answer the CLI line and stop within TimeoutStopSec, as written', async () => {
    const [setup, unit, cli] = [blocks[0]!, blocks[1]!, blocks[2]!];
    const service = unitService(unit.text);
    const srv = mkdtempSync(path.join(tmpdir(), 'roost-systemd-'));
    // The document's paths, moved into a scratch directory: /srv/roost → srv, /etc → srv/etc.
    const moved = (s: string) => s.replaceAll('/srv/roost', srv).replaceAll('/etc/roost.env', path.join(srv, 'roost.env'));
    try {
      // "git clone … /srv/roost/app" and "npm ci": this checkout, installed, stands in.
      symlinkSync(root, moved(service.WorkingDirectory!));
      // The environment file, by the document's own printf … | tee (sudo left out).
      const printf = setup.text.slice(setup.text.indexOf('printf'));
      const made = spawnSync('sh', ['-c', moved(printf).replace('sudo tee', 'tee').replace(/\\\n\s*/g, ' ')], { encoding: 'utf8' });
      expect(made.status).toBe(0);
      const envFile = moved(service.EnvironmentFile!);
      const fileEnv = environmentFile(readFileSync(envFile, 'utf8'));
      expect(fileEnv).toEqual({ ROOST_DOMAIN: 'social.example.com', ROOST_PUBLIC_URL: 'https://social.example.com', ROOST_DATA_DIR: `${srv}/data` });

      // systemd's environment: the file's variables and a bare PATH, nothing else (no HOME).
      // The port is the one change: the test machine's 3000 may be taken.
      const port = await freePort();
      const env = { PATH: '/usr/local/bin:/usr/bin:/bin', ...fileEnv, ROOST_PORT: String(port) };
      const [exe, ...args] = moved(service.ExecStart!).split(' ');
      expect(existsSync(exe!)).toBe(true);
      const child = spawn(exe!, args, { cwd: moved(service.WorkingDirectory!), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const deadline = Date.now() + 90_000;
        let ready = false;
        while (!ready && Date.now() < deadline && child.exitCode === null) {
          ready = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
          if (!ready) await new Promise((r) => setTimeout(r, 250));
        }
        expect({ ready, output: ready ? '' : output }).toEqual({ ready: true, output: '' });
        // JSON logs, since the output is not a terminal (journald's case).
        expect(output.split('\n').find((l) => l.includes('"listening"') || l.includes('listening'))).toMatch(/^\{/);

        // The CLI line, as the same user (sudo left out), reaches the running server.
        const line = cli.text.trim().replace(/^sudo -u \S+ /, '');
        const listed = spawnSync('sh', ['-c', moved(line)], { env: { PATH: env.PATH, ROOST_PORT: String(port) }, encoding: 'utf8', timeout: 60_000 });
        expect({ status: listed.status, stderr: listed.stderr }).toEqual({ status: 0, stderr: '' });
        // A fresh instance: the running server answered (through its control socket) that it has none yet.
        expect(listed.stdout).toBe('No local accounts.\n');
      } finally {
        const stopped = Date.now();
        child.kill('SIGTERM');
        const code = await exited;
        expect(code).toBe(0);
        expect(Date.now() - stopped).toBeLessThan(Number(service.TimeoutStopSec) * 1000);
      }
    } finally {
      rmSync(srv, { recursive: true, force: true });
    }
  }, 180_000);
});
