/**
 * Many instances per process: Fedify's log records reach the logger of the instance they belong
 * to. Two instances with their own log destinations; an activity with a signature that cannot verify posted to B's
 * inbox makes Fedify (on B) log a warning about the signature, which must appear in B's log and not in
 * A's, though B started first and A last.
 */
import { Writable } from 'node:stream';
import { describe, it, expect, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from './helpers/roost.ts';
import { createTestUser } from './helpers/auth.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

const roosts: TestRoost[] = [];
afterAll(async () => {
  await Promise.all(roosts.map((r) => r.close()));
});

describe("Fedify's log records", () => {
  it('go to the logger of the instance they belong to', async () => {
    const logA = capture();
    const logB = capture();
    // B starts first and A last: B is neither the first instance nor the latest (the fallback
    // for records outside any instance), so only its own scope can bring its records to it.
    const b = await startTestRoost({ logLevel: 'warn' }, { logDestination: logB.stream });
    roosts.push(b);
    const a = await startTestRoost({ logLevel: 'warn' }, { logDestination: logA.stream });
    roosts.push(a);
    const bob = await createTestUser(b, 'logbob');
    {
      const target = bob.account.uri;
      const res = await fetch(b.at('/inbox'), {
        method: 'POST',
        // A signature that cannot verify: past the inbox guard (which turns away unsigned POSTs
        // before Fedify sees them), so Fedify itself logs the failed verification.
        headers: {
          'content-type': 'application/activity+json',
          signature: 'keyId="https://elsewhere.test/users/mallory#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="AAAA"',
          date: new Date().toUTCString(),
        },
        body: JSON.stringify({
          '@context': 'https://www.w3.org/ns/activitystreams',
          id: 'https://elsewhere.test/activities/1',
          type: 'Follow',
          actor: 'https://elsewhere.test/users/mallory',
          object: target,
        }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    expect(a.config.domain).not.toBe(b.config.domain);
    const fedifyLines = (lines: Record<string, unknown>[]) => lines.filter((l) => l.module === 'fedify');
    await eventually(async () => fedifyLines(logB.lines).length > 0, 10_000, "Fedify's record in B's log");
    expect(fedifyLines(logB.lines)[0]).toMatchObject({ module: 'fedify', category: expect.stringMatching(/^fedify/) });
    expect(fedifyLines(logA.lines)).toEqual([]);
  });
});
