import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.ts';
import {
  buildParams,
  normalizeJson,
  paramArray,
  paramBool,
  paramInt,
  paramString,
  paramStrings,
  parseQuery,
  splitQuery,
} from '../../src/http/params.ts';

describe('parseQuery: Rails-style nested keys', () => {
  it('collects id[] into an array', () => {
    expect(parseQuery('id[]=1&id[]=2')).toEqual({ id: ['1', '2'] });
  });

  it('nests data[alerts][follow]', () => {
    expect(parseQuery('data[alerts][follow]=true&data[alerts][mention]=false&data[policy]=all')).toEqual({
      data: { alerts: { follow: 'true', mention: 'false' }, policy: 'all' },
    });
  });

  it('turns integer-keyed hashes into arrays ordered by index', () => {
    expect(
      parseQuery('keywords_attributes[1][keyword]=y&keywords_attributes[0][keyword]=x&keywords_attributes[0][whole_word]=false'),
    ).toEqual({ keywords_attributes: [{ keyword: 'x', whole_word: 'false' }, { keyword: 'y' }] });
  });

  it('closes gaps between indices and keeps objects with huge integer keys as objects', () => {
    expect(parseQuery('a[5]=x&a[2]=y')).toEqual({ a: ['y', 'x'] });
    expect(parseQuery('a[0]=x&a[99999]=y')).toEqual({ a: { '0': 'x', '99999': 'y' } });
  });

  it("follows Rack's array-of-hashes rule for a[][b]", () => {
    expect(parseQuery('a[][b]=1&a[][c]=2&a[][b]=3')).toEqual({ a: [{ b: '1', c: '2' }, { b: '3' }] });
  });

  it('decodes + and %-escapes in keys and values, keeps bad escapes literally', () => {
    expect(parseQuery('q=hello+world&n%5B%5D=%C3%A9&bad=%zz%41')).toEqual({ q: 'hello world', n: ['é'], bad: '%zzA' });
  });

  it('handles empty values, keys without =, empty pairs; last plain key wins', () => {
    expect(parseQuery('a=&b&&c=1&c=2')).toEqual({ a: '', b: '', c: '2' });
    expect(splitQuery('')).toEqual([]);
  });

  it('keeps the top level an object even with integer keys', () => {
    expect(parseQuery('0=a&1[x]=b')).toEqual({ '0': 'a', '1': { x: 'b' } });
  });

  it('rejects a key used both as a scalar and a container with a 400 (Rack ParameterTypeError)', () => {
    expect(() => parseQuery('a=1&a[b]=2')).toThrowError(HttpError);
    try {
      parseQuery('a[b]=1&a[]=2');
      expect.unreachable();
    } catch (e) {
      expect((e as HttpError).status).toBe(400);
      expect((e as HttpError).body).toEqual({ error: 'expected Array (got Hash) for param `a`' });
    }
  });

  it('rejects absurd nesting depth with a 400', () => {
    const key = 'a' + '[x]'.repeat(40);
    try {
      parseQuery(`${key}=1`);
      expect.unreachable();
    } catch (e) {
      expect((e as HttpError).status).toBe(400);
      expect((e as HttpError).body.error).toBe('Parameters nested deeper than 32 levels');
    }
    expect(parseQuery('a' + '[x]'.repeat(10) + '=1')).toBeTypeOf('object');
  });
});

describe('prototype pollution', () => {
  it('drops __proto__, constructor and prototype keys in forms', () => {
    const p = parseQuery('__proto__[polluted]=1&a[__proto__][polluted]=1&constructor[prototype][polluted]=1&a[b]=ok&x[constructor]=1&prototype=2');
    expect(p).toEqual({ a: { b: 'ok' }, x: {} });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(p.a)).toBe(Object.prototype);
  });

  it('drops them in arrays of hashes too', () => {
    const p = parseQuery('a[][__proto__][polluted]=1&a[][b]=2');
    expect(p).toEqual({ a: [{ b: '2' }] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops them from JSON bodies (own __proto__ keys from JSON.parse)', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"constructor": {"prototype": {"polluted": 1}}, "b": 1}, "list": [{"__proto__": {"x": 1}, "y": 2}]}');
    const p = normalizeJson(parsed);
    expect(p).toEqual({ a: { b: 1 }, list: [{ y: 2 }] });
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('normalizeJson', () => {
  it('gives JSON the same shape as forms (integer-keyed objects → arrays), keeping types', () => {
    expect(
      normalizeJson({ keywords_attributes: { '0': { keyword: 'x', whole_word: false }, '1': { keyword: 'y' } }, id: ['1', '2'], data: { alerts: { follow: true } } }),
    ).toEqual({ keywords_attributes: [{ keyword: 'x', whole_word: false }, { keyword: 'y' }], id: ['1', '2'], data: { alerts: { follow: true } } });
  });

  it('wraps a non-object top level as _json, as Rails does', () => {
    expect(normalizeJson([1, 2])).toEqual({ _json: [1, 2] });
    expect(normalizeJson('x')).toEqual({ _json: 'x' });
    expect(normalizeJson(null)).toEqual({ _json: null });
  });

  it('rejects absurd nesting depth with a 400', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { a: deep };
    expect(() => normalizeJson(deep)).toThrowError('Parameters nested deeper than 32 levels');
  });

  it('returns a fresh tree', () => {
    const src = { a: { b: 1 } };
    const p = normalizeJson(src);
    expect(p.a).not.toBe(src.a);
  });
});

describe('buildParams (multipart fields)', () => {
  it('builds the same nesting from decoded pairs', () => {
    expect(buildParams([['poll[options][]', 'a'], ['poll[options][]', 'b'], ['poll[expires_in]', '300']])).toEqual({ poll: { options: ['a', 'b'], expires_in: '300' } });
  });
});

describe('coercion helpers', () => {
  it('paramBool follows ActiveModel::Type::Boolean', () => {
    for (const v of [false, 0, '0', 'f', 'F', 'false', 'FALSE', 'off', 'OFF']) expect(paramBool(v)).toBe(false);
    for (const v of [true, 1, '1', 't', 'true', 'TRUE', 'on', 'yes', 'anything']) expect(paramBool(v)).toBe(true);
    expect(paramBool(undefined)).toBeUndefined();
    expect(paramBool('')).toBeUndefined();
    expect(paramBool(null, true)).toBe(true);
    expect(paramBool('', false)).toBe(false);
  });

  it('paramInt reads leading digits like to_i, with fallback and clamping', () => {
    expect(paramInt('40')).toBe(40);
    expect(paramInt(' 12abc')).toBe(12);
    expect(paramInt('-3')).toBe(-3);
    expect(paramInt(7.9)).toBe(7);
    expect(paramInt('abc')).toBeUndefined();
    expect(paramInt(undefined, 20)).toBe(20);
    expect(paramInt('500', 20, { min: 1, max: 80 })).toBe(80);
    expect(paramInt('0', 20, { min: 1, max: 80 })).toBe(1);
    expect(paramInt('99999999999999999999', 20)).toBe(20);
    expect(paramInt(true as unknown as string, 5)).toBe(5);
  });

  it('paramString stringifies scalars only', () => {
    expect(paramString('a')).toBe('a');
    expect(paramString(12)).toBe('12');
    expect(paramString(false)).toBe('false');
    expect(paramString(null)).toBeUndefined();
    expect(paramString(['a'])).toBeUndefined();
    expect(paramString({ a: '1' }, 'd')).toBe('d');
  });

  it('paramArray is Ruby Array()', () => {
    expect(paramArray(['1', '2'])).toEqual(['1', '2']);
    expect(paramArray('1')).toEqual(['1']);
    expect(paramArray(undefined)).toEqual([]);
    expect(paramArray(null)).toEqual([]);
    expect(paramArray({ a: '1', b: '2' })).toEqual(['1', '2']);
    expect(paramStrings(['1', 2, { x: 1 }, true])).toEqual(['1', '2', 'true']);
  });
});

describe('keys that name Object.prototype members', () => {
  it('are ordinary keys (toString[a], hasOwnProperty[])', () => {
    expect(parseQuery('toString[a]=1&hasOwnProperty[]=2&valueOf=3')).toEqual({ toString: { a: '1' }, hasOwnProperty: ['2'], valueOf: '3' });
  });
});
