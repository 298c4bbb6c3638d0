/** Id and NUL handling in src/http/params.ts: the one place ids and string params are checked. */
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.ts';
import { normalizeJson, paramId, paramIds, parseQuery, requireId } from '../../src/http/params.ts';

describe('paramId', () => {
  it('takes the ids a bigint holds, canonical, and nothing else', () => {
    expect(paramId('1')).toBe('1');
    expect(paramId('9223372036854775807')).toBe('9223372036854775807');
    expect(paramId(117666673461767014)).toBeUndefined(); // not a safe integer: digits were lost
    expect(paramId(42)).toBe('42');
    for (const bad of ['9223372036854775808', '99999999999999999999', '', '-1', '+1', '1e3', '1.5', ' 1', '0x10', 'abc', '1\u0000', '١٢']) {
      expect(paramId(bad), JSON.stringify(bad)).toBeUndefined();
    }
    for (const bad of [null, true, [], {}, ['1']]) expect(paramId(bad as never)).toBeUndefined();
  });

  it('requireId answers 404 Record not found for a non-id', () => {
    expect(requireId('7')).toBe('7');
    const e = (() => {
      try {
        requireId('99999999999999999999');
      } catch (err) {
        return err as HttpError;
      }
    })();
    expect(e).toBeInstanceOf(HttpError);
    expect([e!.status, e!.body]).toEqual([404, { error: 'Record not found' }]);
  });

  it('paramIds keeps the valid ids in order, once each, up to the limit', () => {
    expect(paramIds(['3', 'x', '1', '3', '99999999999999999999', '2'], 40)).toEqual(['3', '1', '2']);
    expect(paramIds(['1', '2', '3'], 2)).toEqual(['1', '2']);
    expect(paramIds('5', 40)).toEqual(['5']);
  });
});

describe('NUL bytes', () => {
  const nul = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return [(e as HttpError).status, (e as HttpError).body.error];
    }
    return null;
  };
  const refused = [400, 'Invalid request parameters: a NUL byte is not allowed'];

  it('are refused in query and form keys and values, nested or not', () => {
    expect(nul(() => parseQuery('a=%00'))).toEqual(refused);
    expect(nul(() => parseQuery('a%00=1'))).toEqual(refused);
    expect(nul(() => parseQuery('a[b][]=x%00y'))).toEqual(refused);
    expect(nul(() => parseQuery('a[%00]=1'))).toEqual(refused);
    expect(parseQuery('a=%01&b=%E2%80%AE')).toEqual({ a: '\u0001', b: '\u202E' });
  });

  it('are refused in JSON keys and strings at any depth', () => {
    expect(nul(() => normalizeJson({ a: 'x\u0000' }))).toEqual(refused);
    expect(nul(() => normalizeJson({ 'a\u0000': 1 }))).toEqual(refused);
    expect(nul(() => normalizeJson({ a: [{ b: ['\u0000'] }] }))).toEqual(refused);
    expect(nul(() => normalizeJson({ a: { 'k\u0000': 1 } }))).toEqual(refused);
    expect(nul(() => normalizeJson(['\u0000']))).toEqual(refused);
    expect(normalizeJson({ a: 'fine' })).toEqual({ a: 'fine' });
  });
});
