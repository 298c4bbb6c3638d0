/**
 * Bounded deliveries (issue 7, item 2). Fedify posts activities to remote inboxes with the global
 * fetch; Roost bounds that fetch process-wide (src/federation/delivery-bounds.ts). A remote
 * follower whose inbox is a tarpit (accepts, reads the request, never answers) gets the Accept of
 * its Follow: the attempt is abandoned at the delivery timeout, the socket closed, and the outbox
 * queue tries again later instead of one worker waiting undici's 300 s. And with private addresses
 * refused, the global fetch cannot reach a loopback address, except the instance's own.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('a follower whose inbox is a tarpit', () => {
  it('has each delivery attempt abandoned at the delivery timeout, and retried later', { timeout: 60_000 }, async () => {
    const roost: TestRoost = await startTestRoost({ federation: { deliveryTimeoutSeconds: 1 } });
    const roostCloser = () => roost.close();
    closers.push(roostCloser);
    const peer: FakePeer = await startFakePeer();
    closers.push(() => peer.close());
    peer.actor.inbox = `${peer.base}/tarpit`;
    await createTestUser(roost, 'alice');

    const res = await peer.deliver(roost.at('/inbox'), {
      '@context': AS_CONTEXT,
      id: `${peer.actorId}#follow-1`,
      type: 'Follow',
      actor: peer.actorId,
      object: roost.at('/users/alice'),
    });
    expect(res.status).toBe(202);

    // Roost accepts the follow and delivers the Accept to the tarpit, twice: the first attempt
    // given up, then the queue's retry.
    await eventually(async () => peer.tarpitOpenedAt.length >= 2, 20_000, 'a retried delivery to the tarpit');
    expect(peer.hits.filter((h) => h === 'POST /tarpit').length).toBeGreaterThanOrEqual(2);
    const [opened] = peer.tarpitOpenedAt;
    const closed = peer.tarpitClosedAt[0];
    expect(closed).toBeDefined();
    // Abandoned after about the 1 s timeout (undici's timers tick in about a second), not 300 s.
    expect(closed! - opened!).toBeGreaterThanOrEqual(900);
    expect(closed! - opened!).toBeLessThan(5_000);
    // The retry comes after the first attempt was given up.
    expect(peer.tarpitOpenedAt[1]!).toBeGreaterThanOrEqual(closed!);

    // (this instance allows private addresses, which the process's bounds follow: stop it now)
    await roost.close();
    closers.splice(closers.indexOf(roostCloser), 1);
  });
});

describe('private addresses refused', () => {
  it('refuses a connection to a loopback address, on the address connected, but reaches the instance itself', async () => {
    const guarded = await startTestRoost({ federation: { allowPrivateAddresses: false } });
    const guardedCloser = () => guarded.close();
    closers.push(guardedCloser);
    const requests: string[] = [];
    let connections = 0;
    const target = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.end('ok');
    });
    target.on('connection', () => connections++);
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => target.close(() => r())));
    const port = (target.address() as AddressInfo).port;

    // A name (resolved by the system: localhost is loopback) and an IP literal: both connect,
    // both are cut before the request is written.
    for (const url of [`http://localhost:${port}/inbox`, `http://127.0.0.1:${port}/inbox`]) {
      const err = await fetch(url, { method: 'POST', body: '{}' }).then(
        () => null,
        (e: unknown) => e as Error & { cause?: Error },
      );
      expect(err).not.toBeNull();
      expect(String(err!.cause?.message)).toMatch(/non-public address/);
    }
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(requests).toEqual([]);

    // The instance's own origin stays reachable.
    const own = await fetch(guarded.at('/api/v1/instance'));
    expect(own.status).toBe(200);

    // Once the instance stops, the process's fetch is as it was.
    await guarded.close();
    closers.splice(closers.indexOf(guardedCloser), 1);
    const after = await fetch(`http://127.0.0.1:${port}/after`);
    expect(await after.text()).toBe('ok');
    expect(requests).toEqual(['GET /after']);
  });
});
