/**
 * The control socket: a Unix socket in the data directory (mode 0600) through which `roost`
 * commands reach a running server. One JSON line in, one JSON line out.
 */
import net from 'node:net';
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { runCommand, type CommandArgs, type CommandDeps } from './commands.ts';

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'roost.sock');
}

const MAX_LINE = 64 * 1024;

export async function startControlSocket(services: Services, deps: CommandDeps, log: Logger): Promise<{ close(): Promise<void> }> {
  const file = controlSocketPath(services.config.dataDir);
  if (existsSync(file)) unlinkSync(file); // we hold the data directory lock: any socket here is stale
  const server = net.createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_LINE) return conn.destroy();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      conn.pause();
      void (async () => {
        let reply: Record<string, unknown>;
        try {
          const req = JSON.parse(line) as { command: string; args: CommandArgs };
          log.info({ command: req.command }, 'control command');
          reply = { ok: true, result: await runCommand(services, req.command, req.args ?? {}, deps) };
        } catch (e) {
          const err = e instanceof RoostError ? e : null;
          if (!err) log.error({ err: e }, 'control command failed');
          reply = { ok: false, status: err?.status ?? 500, body: err?.body ?? { error: (e as Error).message } };
        }
        conn.end(JSON.stringify(reply) + '\n');
      })();
    });
    conn.on('error', () => conn.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  chmodSync(file, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        if (existsSync(file)) unlinkSync(file);
      }),
  };
}

/** Sends one command to a running server; null when no server listens on the socket. */
export async function sendControlCommand(
  dataDir: string,
  command: string,
  args: CommandArgs,
): Promise<{ ok: true; result: Record<string, unknown> } | { ok: false; status: number; body: Record<string, unknown> } | null> {
  const file = controlSocketPath(dataDir);
  if (!existsSync(file)) return null;
  return new Promise((resolve, reject) => {
    const conn = net.connect(file);
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(JSON.stringify({ command, args }) + '\n'));
    conn.on('data', (c: string) => (buf += c));
    conn.on('end', () => {
      try {
        resolve(JSON.parse(buf));
      } catch (e) {
        reject(new Error(`Bad reply from the running server: ${(e as Error).message}`));
      }
    });
    conn.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED' || e.code === 'ENOENT') resolve(null);
      else reject(e);
    });
  });
}
