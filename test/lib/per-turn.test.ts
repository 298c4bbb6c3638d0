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
});
