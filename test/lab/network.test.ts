/**
 * The lab's virtual network on its own: in-process hosts, a manual clock, and each fault the
 * scenario file can ask for, drawn from the seed.
 */
import { describe, it, expect } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { NetworkError, VirtualNetwork } from '../../src/lab/network.ts';
import type { WireRequest } from '../../src/lib/network.ts';
import type { LinkSpec } from '../../src/lab/scenario-types.ts';
import type { TraceInput } from '../../src/lab/trace.ts';

const PERFECT: LinkSpec = { latencyMs: 0, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0, errors: {}, slowMs: 0, down: false };

function setUp(link: Partial<LinkSpec>, seed = 1) {
  const clock = createManualClock(new Date('2026-01-01T00:00:00Z'));
  const trace: TraceInput[] = [];
  const net = new VirtualNetwork({ clock, seed, spec: { defaults: { ...PERFECT, ...link }, links: [] }, trace: (r) => trace.push(r) });
  const received: { at: number; body: string }[] = [];
  net.attach({
    name: 'b.test',
    handle: async (req) => {
      received.push({ at: clock.now().getTime() - Date.parse('2026-01-01T00:00:00Z'), body: req.body ? Buffer.from(req.body).toString() : '' });
      return { status: 202, headers: {}, body: new Uint8Array() };
    },
  });
  const send = net.sender('a.test');
  return { clock, net, trace, received, send };
}

const post = (n: number): WireRequest => ({
  method: 'POST',
  url: new URL('http://b.test/inbox'),
  headers: { 'content-type': 'application/activity+json' },
  body: Buffer.from(JSON.stringify({ id: `http://a.test/activities/${n}`, type: 'Create', object: { content: `post ${n}` } })),
});

/** Moves the clock to each held arrival in turn until nothing is held. */
async function runNetwork(s: ReturnType<typeof setUp>) {
  for (;;) {
    await new Promise((r) => setImmediate(r));
    const next = s.net.nextDue();
    if (next === null) return;
    s.clock.set(new Date(next));
    s.net.releaseDue();
  }
}

describe('the virtual network', () => {
  it('holds a delivery until the lab clock reaches its arrival, and traces its latency', async () => {
    const s = setUp({ latencyMs: 2_000 });
    let answered = false;
    const pending = s.send(post(1)).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false);
    expect(s.net.heldCount).toBe(1);
    expect(s.net.nextDue()).toBe(Date.parse('2026-01-01T00:00:02Z'));
    await runNetwork(s);
    expect((await pending).status).toBe(202);
    expect(s.received.map((r) => r.at)).toEqual([2_000]);
    expect(s.trace.filter((t) => t.kind === 'delivery')).toMatchObject([{ outcome: 'delivered', status: 202, latencyMs: 2_000, attempt: 1, type: 'Create' }]);
  });

  it('refuses at once across a partition and to a host that is down; nothing outside the lab resolves', async () => {
    const s = setUp({ latencyMs: 1_000 });
    s.net.partition([['a.test'], ['b.test']]);
    await expect(s.send(post(1))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    s.net.heal();
    s.net.setDown('b.test', true);
    await expect(s.send(post(2))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(s.send({ ...post(3), url: new URL('http://example.com/inbox') })).rejects.toBeInstanceOf(NetworkError);
    expect(s.trace.filter((t) => t.kind === 'delivery').map((t) => (t as { outcome: string }).outcome)).toEqual(['partitioned', 'down', 'down']);
    expect(s.received).toEqual([]);
  });

  it('loses, fails and duplicates deliveries at the link\'s rates, the same way for the same seed', async () => {
    const outcomes = async (seed: number) => {
      const s = setUp({ latencyMs: 100, loss: 0.2, errors: { '503': 0.2 }, duplicate: 0.2 }, seed);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          s.send(post(i)).then(
            (r) => String(r.status),
            (e: NetworkError) => e.code,
          ),
        ).concat([runNetwork(s).then(() => 'ran')]),
      );
      await runNetwork(s);
      return { results: results.slice(0, 200), received: s.received.length };
    };
    const a = await outcomes(7);
    const count = (v: string) => a.results.filter((r) => r === v).length;
    // 200 deliveries at 20 % loss, then 20 % of the rest answered 503: near 40, 32, 128.
    expect(count('ETIMEDOUT')).toBeGreaterThan(20);
    expect(count('ETIMEDOUT')).toBeLessThan(60);
    expect(count('503')).toBeGreaterThan(15);
    expect(count('503')).toBeLessThan(50);
    expect(count('202')).toBe(200 - count('ETIMEDOUT') - count('503'));
    // Duplicates: some delivered requests arrived twice.
    expect(a.received).toBeGreaterThan(count('202'));
    expect(await outcomes(7)).toEqual(a);
    expect((await outcomes(8)).results).not.toEqual(a.results);
  });

  it('adds a slow inbox\'s time, and lets a reordered delivery be overtaken', async () => {
    const slow = setUp({ latencyMs: 100, slowMs: 5_000 });
    const p = slow.send(post(1));
    await runNetwork(slow);
    await p;
    expect(slow.received.map((r) => r.at)).toEqual([5_100]);

    const s = setUp({ latencyMs: 1_000, reorder: 1 }, 3);
    const sent = [s.send(post(1)), s.send(post(2)), s.send(post(3))];
    await runNetwork(s);
    await Promise.all(sent);
    const order = s.received.map((r) => JSON.parse(r.body).object.content);
    expect(order).toHaveLength(3);
    expect(order).not.toEqual(['post 1', 'post 2', 'post 3']);
  });

  it('does not hold or drop fetches: a lookup a step waits on takes no lab time', async () => {
    const s = setUp({ latencyMs: 60_000, loss: 1 });
    const r = await s.send({ method: 'GET', url: new URL('http://b.test/users/bob'), headers: {}, body: null });
    expect(r.status).toBe(202);
    expect(s.net.heldCount).toBe(0);
    expect(s.trace).toMatchObject([{ kind: 'fetch', outcome: 'ok', to: 'b.test' }]);
  });

  it('fails the held requests of a host that stops, and every later one once the lab closes', async () => {
    const s = setUp({ latencyMs: 1_000 });
    const held = s.send(post(1));
    s.net.abortHeld('a.test');
    await expect(held).rejects.toMatchObject({ code: 'ECONNRESET' });
    s.net.abortHeld();
    await expect(s.send(post(2))).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});
