import { describe, it, expect } from 'vitest';
import { createIdGenerator, idTime, minIdAt } from '../src/lib/snowflake.ts';

describe('snowflake ids', () => {
  it('are decimal strings that carry their millisecond and increase strictly', () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const ids = createIdGenerator(() => at);
    const list = Array.from({ length: 1000 }, () => ids.next());
    for (const id of list) {
      expect(id).toMatch(/^\d+$/);
      expect(idTime(id).toISOString()).toBe('2026-11-22T10:00:00.123Z');
    }
    for (let i = 1; i < list.length; i++) expect(BigInt(list[i]) > BigInt(list[i - 1])).toBe(true);
    expect(new Set(list).size).toBe(1000);
  });

  it('sort by time across milliseconds and bound time ranges', () => {
    let t = 1_700_000_000_000;
    const ids = createIdGenerator(() => new Date(t));
    const a = ids.next();
    t += 1;
    const b = ids.next();
    expect(BigInt(b) > BigInt(a)).toBe(true);
    expect(BigInt(minIdAt(new Date(t))) <= BigInt(b)).toBe(true);
    expect(BigInt(minIdAt(new Date(t))) > BigInt(a)).toBe(true);
  });

  it('makes ids for a given moment', () => {
    const ids = createIdGenerator(() => new Date());
    expect(idTime(ids.next(new Date('2020-01-01T00:00:00Z'))).toISOString()).toBe('2020-01-01T00:00:00.000Z');
  });
});
