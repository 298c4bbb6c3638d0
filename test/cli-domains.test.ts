/**
 * `roost domains block|unblock|allow|disallow|list` as real processes, against a running instance
 * that holds its embedded database: every command goes through the instance's control socket and
 * its changes are in force there at once.
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

describe('roost domains', () => {
  it('has help text', async () => {
    const help = await run(['domains', '--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout.split('\n').filter((l) => l.startsWith('  roost '))).toEqual([
      '  roost domains block DOMAIN [--severity silence|suspend|noop] [--reject-media] [--reject-reports]',
      '  roost domains unblock DOMAIN',
      '  roost domains allow DOMAIN',
      '  roost domains disallow DOMAIN',
      '  roost domains list',
      '  roost domains export',
    ]);
  }, 60_000);

  it('blocks, lists, changes, allows and unblocks through the control socket', async () => {
    const blocked = await run(['domains', 'block', 'Spam.Example', '--severity', 'suspend', '--reject-media', '--public-comment', 'Spam wave']);
    expect([blocked.code, blocked.stdout, blocked.stderr]).toEqual([0, 'OK: spam.example blocked: suspend, media rejected\n', '']);
    // In force in the running instance at once.
    expect(await roost.services.domainPolicy.suspended('www.spam.example')).toBe(true);

    const conflict = await run(['domains', 'block', 'sub.spam.example', '--severity', 'noop']);
    expect([conflict.code, conflict.stderr]).toEqual([1, 'roost: You have already imposed stricter limits on spam.example.\n']);
    const invalid = await run(['domains', 'block', 'not a domain']);
    expect([invalid.code, invalid.stderr]).toEqual([1, 'roost: Validation failed: Domain is invalid\n']);
    const usage = await run(['domains', 'block', 'x.example', '--severity', 'nuke']);
    expect([usage.code, usage.stderr.split('\n')[0]]).toEqual([2, 'roost domains block: --severity must be silence, suspend or noop, got "nuke"']);

    expect((await run(['domains', 'block', 'quiet.example', '--reject-reports'])).stdout).toBe('OK: quiet.example blocked: silence, reports rejected\n');
    expect((await run(['domains', 'allow', 'Friends.Example'])).stdout).toBe('OK: friends.example allowed (this matters once federation.mode is allowlist)\n');

    const listed = await run(['domains', 'list']);
    expect([listed.code, listed.stdout]).toEqual([
      0,
      [
        'Federation mode: open',
        'DOMAIN         SEVERITY  MEDIA     REPORTS   COMMENT',
        'quiet.example  silence   -         rejected',
        'spam.example   suspend   rejected  -         Spam wave',
        'Allowed: friends.example',
        '',
      ].join('\n'),
    ]);

    // Blocking a blocked domain changes its block.
    const changed = await run(['domains', 'block', 'spam.example', '--severity', 'silence']);
    expect(changed.stdout).toBe('OK: spam.example block changed: silence\n');
    expect(await roost.services.domainPolicy.suspended('spam.example')).toBe(false);
    expect(await roost.services.domainPolicy.silenced('spam.example')).toBe(true);

    expect((await run(['domains', 'unblock', 'spam.example'])).stdout).toBe('OK: spam.example unblocked\n');
    const again = await run(['domains', 'unblock', 'SPAM.example']);
    expect([again.code, again.stderr]).toEqual([1, 'roost: No block on spam.example\n']);
    expect((await run(['domains', 'unblock', 'quiet.example'])).code).toBe(0);
    expect((await run(['domains', 'disallow', 'friends.example'])).stdout).toBe('OK: friends.example no longer allowed\n');
    expect((await run(['domains', 'list'])).stdout).toBe('Federation mode: open\nNo blocked domains.\nNo allowed domains.\n');
    expect(await roost.services.domainPolicy.silenced('spam.example')).toBe(false);
  }, 120_000);
});
