/**
 * `roost webhooks …`, `roost blocklists …` and `roost domains export` as real processes, against a
 * running instance that holds its embedded database (through its control socket).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.ts';
import { startTestRoost, type TestRoost } from './helpers/roost.ts';

let roost: TestRoost;

const run = (args: string[]) => runCli(args, { ROOST_DATA_DIR: roost.dataDir });

beforeAll(async () => {
  roost = await startTestRoost({}, { controlSocket: true });
});
afterAll(async () => {
  await roost?.close();
});

describe('roost webhooks', () => {
  it('creates, lists, shows failures and deletes', async () => {
    const created = await run(['webhooks', 'create', 'https://hooks.example/in', '--event', 'status.created', '--event', 'report.created']);
    expect([created.code, created.stderr]).toEqual([0, '']);
    const [, id, secret] = /^OK: webhook (\d+) created\nSecret: ([0-9a-f]{40})\n$/.exec(created.stdout)!;
    expect(id && secret).toBeTruthy();
    const list = await run(['webhooks', 'list']);
    expect(list.stdout).toBe(`${'ID'.padEnd(id!.length)}  ENABLED  ${'EVENTS'.padEnd(29)}  URL\n${id}  yes      status.created,report.created  https://hooks.example/in\n`);
    expect((await run(['webhooks', 'failures', id!])).stdout).toBe('No failed deliveries.\n');
    const bad = await run(['webhooks', 'create', 'https://hooks.example/in', '--event', 'nope']);
    expect([bad.code, bad.stderr]).toEqual([1, 'roost: Validation failed: Events is invalid\n  events: is invalid (ERR_INVALID)\n']);
    const usage = await run(['webhooks', 'create', 'https://hooks.example/in']);
    expect([usage.code, usage.stderr.split('\n')[0]]).toEqual([2, 'roost webhooks create: give at least one --event']);
    expect((await run(['webhooks', 'delete', id!])).stdout).toBe(`OK: webhook ${id} deleted\n`);
    const gone = await run(['webhooks', 'delete', id!]);
    expect([gone.code, gone.stderr]).toEqual([1, `roost: No webhook ${id}\n`]);
    expect((await run(['webhooks', 'list'])).stdout).toBe('No webhooks.\n');
  }, 120_000);
});

describe('roost blocklists and domains export', () => {
  it('subscribes, lists, unsubscribes; exports the blocks as CSV', async () => {
    const sub = await run(['blocklists', 'subscribe', 'http://127.0.0.1:9/list.csv']);
    expect([sub.code, sub.stderr]).toEqual([0, '']);
    const id = /^OK: subscription (\d+) created; its first fetch is queued\n$/.exec(sub.stdout)![1]!;
    expect((await run(['blocklists', 'pending'])).stdout).toBe('No entries waiting for review.\n');
    const refreshed = await run(['blocklists', 'refresh', id]);
    expect(refreshed.code).toBe(1);
    expect(refreshed.stderr).toMatch(/^roost: the list could not be used \(.+\); nothing changed\n$/);
    expect((await run(['blocklists', 'list'])).stdout).toContain(`${id}  no    0        0        `);
    expect((await run(['blocklists', 'unsubscribe', id])).stdout).toBe(`OK: subscription ${id} removed\n`);
    expect((await run(['blocklists', 'approve', '12345'])).stderr).toBe('roost: No entry 12345\n');
    await run(['domains', 'block', 'spam.example', '--severity', 'suspend', '--public-comment', 'Spam, lots']);
    const csv = await run(['domains', 'export']);
    expect([csv.code, csv.stdout]).toEqual([0, '#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\nspam.example,suspend,false,false,"Spam, lots",false\n']);
  }, 120_000);
});
