import { describe, expect, it } from 'vitest';
import { perTurn } from '../../src/lib/per-turn.ts';

describe('perTurn', () => {
  it('hands the calls of one turn to run as one batch, in order, and the next turn as another', async () => {
    const batches: number[][] = [];
    const double = perTurn<number, number>(async (batch) => {
      batches.push(batch.map((c) => c.item));
      for (const c of batch) c.resolve(c.item * 2);
    });
    const first = await Promise.all([double(1), double(2), double(3)]);
    const second = await Promise.all([double(4)]);
    expect(first).toEqual([2, 4, 6]);
    expect(second).toEqual([8]);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('rejects the calls run left unsettled when it throws, and keeps what it settled', async () => {
    const f = perTurn<string, string>(async (batch) => {
      batch[0]!.resolve('done');
      batch[1]!.reject(new Error('its own'));
      throw new Error('database down');
    });
    const results = await Promise.allSettled([f('a'), f('b'), f('c')]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'done' },
      { status: 'rejected', reason: new Error('its own') },
      { status: 'rejected', reason: new Error('database down') },
    ]);
  });

  it('with maxInFlight 1, runs one batch at a time: calls made meanwhile go together in the next', async () => {
    const batches: number[][] = [];
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const f = perTurn<number, number>(
      async (batch) => {
        running++;
        most = Math.max(most, running);
        batches.push(batch.map((c) => c.item));
        await new Promise<void>((r) => releases.push(r));
        running--;
        for (const c of batch) c.resolve(c.item);
      },
      { maxInFlight: 1 },
    );
    const first = f(1);
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]);
    // Three more, over three turns, while the first batch runs: they wait, then go as one.
    const later = [f(2)];
    await new Promise((r) => setImmediate(r));
    later.push(f(3));
    await new Promise((r) => setImmediate(r));
    later.push(f(4));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]);
    releases.shift()!();
    expect(await first).toBe(1);
    // (the next batch starts in the turn after the first settles)
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releases.shift()!();
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
    expect(most).toBe(1);
    // Idle again: a call goes at the end of its own turn.
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    const last = f(5);
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1], [2, 3, 4], [5]]);
    releases.shift()!();
    expect(await last).toBe(5);
  });

  it('with maxInFlight, a batch that throws frees its place for the next', async () => {
    let n = 0;
    const f = perTurn<string, string>(
      async (batch) => {
        if (n++ === 0) throw new Error('first fails');
        for (const c of batch) c.resolve(c.item);
      },
      { maxInFlight: 1 },
    );
    await expect(f('a')).rejects.toThrow('first fails');
    expect(await f('b')).toBe('b');
  });
});
