import { describe, it, expect } from 'vitest';
import { stringifyJson } from '../../src/lib/json-integers.ts';

describe('stringifyJson', () => {
  it('writes a bigint as a JSON integer of its exact digits', () => {
    expect(stringifyJson({ a: 123456789012345678901n, b: [1n, -7n], c: null })).toBe('{"a":123456789012345678901,"b":[1,-7],"c":null}');
  });
  it('leaves strings that merely look like the marker alone, and plain documents as JSON.stringify', () => {
    const doc = { s: '\u0001roost-int-x:5', n: 1, t: 'a"b' };
    expect(stringifyJson(doc)).toBe(JSON.stringify(doc));
    expect(stringifyJson({ ...doc, i: 9007199254740993n })).toBe(`${JSON.stringify(doc).slice(0, -1)},"i":9007199254740993}`);
    expect(stringifyJson(undefined)).toBe('null');
  });
});
