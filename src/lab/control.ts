/**
 * The lab's test-control API, for harnesses outside Roost (FediTest-like suites, notebooks): it
 * exists only in a lab (`roost lab serve`), listens on loopback only, and takes the bearer token
 * the lab prints when it starts. JSON in and out, Mastodon's error shape.
 *
 *   GET  /lab                      the scenario, the clock, the instances (name, software, loopback port)
 *   POST /lab/accounts             { instance, username, scopes? } → { handle, id, token }
 *   POST /lab/settle               waits until everything due now is done → { clock, next }
 *   POST /lab/advance              { duration: "10m" | ms } → runs the lab that far → { clock }
 *   POST /lab/snapshot             { name } keeps databases, clock and network as they are
 *   POST /lab/reset                { name } puts them back
 *
 * An instance's REST API is reached on its loopback port with `Host: <its name>`.
 */
import http from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLocalAccount } from '../services/accounts.ts';
import { mintAccessToken } from '../services/operator-access.ts';
import { RoostError } from '../lib/errors.ts';
import { LabControlError, type Lab } from './lab.ts';
import { parseDuration } from './scenario.ts';

const MAX_BODY = 64 * 1024;

export interface LabControlServer {
  port: number;
  token: string;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new LabControlError(413, 'Body too large');
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new LabControlError(400, 'The body is not JSON');
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new LabControlError(400, 'The body must be a JSON object');
  return json as Record<string, unknown>;
}

function field(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  if (typeof v !== 'string' || v === '') throw new LabControlError(422, `${name} is required (a string)`);
  return v;
}

export function startLabControl(lab: Lab, port = 0): Promise<LabControlServer> {
  const token = randomBytes(24).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  // One request at a time: settling, advancing and snapshots each own the lab while they run.
  let queue: Promise<unknown> = Promise.resolve();

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return send(res, 401, { error: 'The lab control token is missing or wrong' });
    const url = new URL(req.url ?? '/', 'http://lab');
    const route = `${req.method} ${url.pathname}`;
    const body = req.method === 'POST' ? await readJson(req) : {};
    switch (route) {
      case 'GET /lab':
        return send(res, 200, {
          clock: lab.clock.now().toISOString(),
          instances: [...lab.instances.values()].map((i) => ({ name: i.name, software: 'roost', port: i.roost?.port ?? null, up: i.roost !== null })),
          peers: [...lab.peers.keys()],
        });
      case 'POST /lab/accounts': {
        const instance = lab.instances.get(field(body, 'instance'));
        if (!instance?.roost) throw new LabControlError(404, `No running Roost instance named ${String(body.instance)}`);
        const username = field(body, 'username');
        const scopes = body.scopes === undefined ? 'read write follow push' : field(body, 'scopes');
        const { account } = await createLocalAccount(instance.roost.services, { username, email: `${username}@${instance.name}`, confirmed: true, approved: true });
        const minted = await mintAccessToken(instance.roost.services, username, scopes);
        return send(res, 200, { handle: `${username}@${instance.name}`, id: account.id, token: minted.token, scopes: minted.scopes });
      }
      case 'POST /lab/settle': {
        const next = await lab.drain();
        return send(res, 200, { clock: lab.clock.now().toISOString(), next: next === null ? null : new Date(next).toISOString() });
      }
      case 'POST /lab/advance': {
        const raw = body.duration;
        const ms = parseDuration(raw);
        if (ms === null || ms < 0) throw new LabControlError(422, 'duration is required: a number of ms or a duration such as "10m"');
        await lab.runUntil(lab.clock.now().getTime() + ms);
        return send(res, 200, { clock: lab.clock.now().toISOString() });
      }
      case 'POST /lab/snapshot':
        await lab.snapshot(field(body, 'name'));
        return send(res, 200, { snapshot: body.name, clock: lab.clock.now().toISOString() });
      case 'POST /lab/reset':
        await lab.reset(field(body, 'name'));
        return send(res, 200, { reset: body.name, clock: lab.clock.now().toISOString() });
      default:
        return send(res, 404, { error: `No lab control route ${route}` });
    }
  };

  const server = http.createServer((req, res) => {
    const turn = queue.then(() =>
      handle(req, res).catch((e) => {
        if (e instanceof LabControlError) return send(res, e.status, { error: e.message });
        if (e instanceof RoostError) return send(res, e.status, { error: e.message, ...(e.details ? { details: e.details } : {}) });
        return send(res, 500, { error: `The lab failed: ${(e as Error).message}` });
      }),
    );
    queue = turn.catch(() => undefined);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({ port: bound, token, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}
