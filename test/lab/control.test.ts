/**
 * The lab's test-control API, as an outside harness uses it: accounts and tokens provisioned,
 * the instances' REST API reached on their loopback ports, work settled, the clock advanced, and
 * a snapshot put back.
 */
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Lab } from '../../src/lab/lab.ts';
import { startLabControl, type LabControlServer } from '../../src/lab/control.ts';
import { createTraceWriter } from '../../src/lab/trace.ts';
import type { InstanceSpec, Scenario } from '../../src/lab/scenario-types.ts';

function roost(name: string): InstanceSpec {
  return { name, software: 'roost', registrations: 'open', federationMode: 'open', authorizedFetch: false, domainBlocks: [], line: 1 };
}

const scenario: Scenario = {
  name: 'control',
  file: 'control.yaml',
  seed: 1,
  start: new Date('2026-03-01T12:00:00Z'),
  instances: [roost('alpha.test'), roost('beta.test')],
  network: { defaults: { latencyMs: 500, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0, errors: {}, slowMs: 0, down: false }, links: [] },
  accounts: [],
  steps: [],
};

let lab: Lab;
let control: LabControlServer;

/** A raw HTTP call (the Host header is the instance's name). */
function call(port: number, method: string, pathname: string, opts: { token?: string; body?: string; host?: string } = {}): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathname,
        headers: {
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const ctl = (method: string, p: string, body?: unknown) =>
  call(control.port, method, p, { token: control.token, body: body === undefined ? undefined : JSON.stringify(body) });

beforeAll(async () => {
  const trace = createTraceWriter(null, () => lab.clock);
  lab = new Lab({ scenario, trace, log: pino({ level: 'silent' }), databaseUrl: inject('testDatabase').url, workDir: mkdtempSync(path.join(tmpdir(), 'roost-lab-ctl-')) });
  await lab.start();
  control = await startLabControl(lab);
}, 120_000);

afterAll(async () => {
  await control?.close();
  await lab?.close();
});

describe('the lab control API', () => {
  it('refuses requests without its token and bad input with Mastodon-shaped errors', async () => {
    expect((await call(control.port, 'GET', '/lab')).status).toBe(401);
    expect((await call(control.port, 'GET', '/lab', { token: 'wrong' })).status).toBe(401);
    expect(await call(control.port, 'POST', '/lab/accounts', { token: control.token, body: '{not json' })).toEqual({ status: 400, json: { error: 'The body is not JSON' } });
    expect(await ctl('POST', '/lab/accounts', { instance: 'alpha.test' })).toEqual({ status: 422, json: { error: 'username is required (a string)' } });
    expect((await ctl('POST', '/lab/accounts', { instance: 'nowhere.test', username: 'x' })).status).toBe(404);
    expect((await ctl('POST', '/lab/advance', { duration: 'soon' })).status).toBe(422);
    expect((await ctl('POST', '/lab/reset', { name: 'never' })).json).toEqual({ error: 'No snapshot named never' });
    expect((await ctl('POST', '/lab/snapshot', { name: 'Bad Name' })).status).toBe(422);
    expect((await ctl('DELETE', '/lab')).status).toBe(404);
    expect(await call(control.port, 'POST', '/lab/settle', { token: control.token, body: 'x'.repeat(70 * 1024) })).toEqual({ status: 413, json: { error: 'Body too large' } });
  });

  it('provisions, settles, advances, snapshots and resets', async () => {
    const info = await ctl('GET', '/lab');
    expect(info.json.clock).toBe('2026-03-01T12:00:00.000Z');
    const ports = Object.fromEntries(info.json.instances.map((i: { name: string; port: number }) => [i.name, i.port]));
    const alice = (await ctl('POST', '/lab/accounts', { instance: 'alpha.test', username: 'alice' })).json;
    const bob = (await ctl('POST', '/lab/accounts', { instance: 'beta.test', username: 'bob' })).json;
    expect(alice).toMatchObject({ handle: 'alice@alpha.test', scopes: ['read', 'write', 'follow', 'push'] });
    expect(typeof bob.token).toBe('string');

    // bob follows alice through beta's REST API, as a harness would.
    const found = await call(ports['beta.test'], 'GET', '/api/v2/search?type=accounts&resolve=true&q=%40alice%40alpha.test', { token: bob.token, host: 'beta.test' });
    expect(found.status).toBe(200);
    const aliceOnBeta = found.json.accounts[0].id;
    expect((await call(ports['beta.test'], 'POST', `/api/v1/accounts/${aliceOnBeta}/follow`, { token: bob.token, host: 'beta.test', body: '{}' })).status).toBe(200);
    // The Follow travels 500 ms, the Accept 500 ms: settling alone does not move the clock.
    const settled = await ctl('POST', '/lab/settle');
    expect(settled.json.clock).toBe('2026-03-01T12:00:00.000Z');
    expect(settled.json.next).toBe('2026-03-01T12:00:00.500Z');
    expect((await ctl('POST', '/lab/advance', { duration: '2s' })).json.clock).toBe('2026-03-01T12:00:02.000Z');
    const rel = await call(ports['beta.test'], 'GET', `/api/v1/accounts/relationships?id[]=${aliceOnBeta}`, { token: bob.token, host: 'beta.test' });
    expect(rel.json[0].following).toBe(true);

    expect((await ctl('POST', '/lab/snapshot', { name: 'followed' })).status).toBe(200);
    const after = (await ctl('GET', '/lab')).json;
    const alphaPort = after.instances.find((i: { name: string }) => i.name === 'alpha.test').port;
    const post = await call(alphaPort, 'POST', '/api/v1/statuses', { token: alice.token, host: 'alpha.test', body: JSON.stringify({ status: 'after the snapshot' }) });
    expect(post.status).toBe(200);
    await ctl('POST', '/lab/advance', { duration: '1h' });

    const reset = await ctl('POST', '/lab/reset', { name: 'followed' });
    expect(reset.json.clock).toBe('2026-03-01T12:00:02.000Z');
    const back = (await ctl('GET', '/lab')).json;
    const alphaAgain = back.instances.find((i: { name: string }) => i.name === 'alpha.test').port;
    expect((await call(alphaAgain, 'GET', `/api/v1/statuses/${post.json.id}`, { token: alice.token, host: 'alpha.test' })).status).toBe(404);
    // The follow made before the snapshot is still there.
    const betaAgain = back.instances.find((i: { name: string }) => i.name === 'beta.test').port;
    const relAgain = await call(betaAgain, 'GET', `/api/v1/accounts/relationships?id[]=${aliceOnBeta}`, { token: bob.token, host: 'beta.test' });
    expect(relAgain.json[0].following).toBe(true);
  }, 120_000);
});
