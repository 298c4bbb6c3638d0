// Request parameters: Rails-style nested keys from query strings and forms, and the ONE shape that
// query, urlencoded, multipart and JSON bodies are all normalised to.
//
//   id[]=1&id[]=2                                   → { id: ['1', '2'] }
//   data[alerts][follow]=true                       → { data: { alerts: { follow: 'true' } } }
//   keywords_attributes[0][keyword]=x&…[0][whole_word]=false
//                                                   → { keywords_attributes: [{ keyword: 'x', whole_word: 'false' }] }
//   a[][b]=1&a[][c]=2&a[][b]=3                      → { a: [{ b: '1', c: '2' }, { b: '3' }] }   (Rack's rule)
//
// After building, any object whose keys are ALL non-negative integers (≤ MAX_INDEX) becomes an array
// ordered by index (gaps closed) — for forms and JSON alike, so `{"keywords_attributes": {"0": {…}}}`
// and `[{…}]` look the same to services. Keys `__proto__`, `constructor` and `prototype` are dropped
// everywhere (prototype pollution); nesting deeper than MAX_DEPTH is a 400, as is a key used both as a
// scalar and as a container (Rack's ParameterTypeError).
//
// Values from forms and query strings are strings; JSON keeps its types. Services coerce with
// paramBool / paramInt / paramString / paramArray below, which accept both.
//
// A NUL byte in any key or string value (query, form, multipart field or JSON) is a 400 here, once:
// PostgreSQL cannot store it in text, and no Mastodon parameter has a use for it. So is a lone
// UTF-16 surrogate (JSON's "\ud800" escape: the one way a request can carry one, since bytes are
// decoded as UTF-8 with U+FFFD for what is not): it has no UTF-8 form, so PostgreSQL refuses it in
// json values and text would silently get U+FFFD. Refused rather than replaced with U+FFFD, as Rails
// refuses a parameter that is not valid UTF-8 (400 "Invalid request parameters: Invalid encoding
// for parameter") instead of storing something the client did not send. Ids go through
// paramId / requireId: an id PostgreSQL's bigint cannot hold is no id at all (404, never a 500).

import { HttpError } from './errors.ts';

export type ParamValue = string | number | boolean | null | Params | ParamValue[];
export type Params = { [k: string]: ParamValue };

/** Deepest nesting accepted (Rack's default param_depth_limit is 32). */
export const MAX_DEPTH = 32;
/** Largest integer key turned into an array index; objects with larger integer keys stay objects. */
export const MAX_INDEX = 10_000;
/** At most this many key=value pairs per query string or form (Rack: 4096 multipart parts). */
export const MAX_PAIRS = 10_000;

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const INDEX_RE = /^(?:0|[1-9][0-9]{0,4})$/;

function badParams(message: string): HttpError {
  return new HttpError(400, message);
}

export const NUL_MESSAGE = 'Invalid request parameters: a NUL byte is not allowed';

export const ENCODING_MESSAGE = 'Invalid request parameters: Invalid encoding for parameter';

function checkNul(s: string): void {
  if (s.indexOf('\0') !== -1) throw badParams(NUL_MESSAGE);
  if (!s.isWellFormed()) throw badParams(ENCODING_MESSAGE);
}

function isPlainObject(v: unknown): v is Params {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Query strings / application/x-www-form-urlencoded

function decodeComponent(s: string): string {
  if (s.indexOf('+') !== -1) s = s.replace(/\+/g, ' ');
  if (s.indexOf('%') === -1) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    // Invalid %-sequences: decode what can be decoded, keep the rest literally.
    return s.replace(/%[0-9a-fA-F]{2}/g, (m) => {
      try { return decodeURIComponent(m); } catch { return m; }
    });
  }
}

/** Split `a=1&b[]=2` into decoded [key, value] pairs (no nesting yet). */
export function splitQuery(qs: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!qs) return out;
  let start = 0;
  const len = qs.length;
  while (start <= len) {
    let end = qs.indexOf('&', start);
    if (end === -1) end = len;
    if (end > start) {
      const eq = qs.indexOf('=', start);
      let k: string;
      let v: string;
      if (eq === -1 || eq > end) {
        k = qs.slice(start, end);
        v = '';
      } else {
        k = qs.slice(start, eq);
        v = qs.slice(eq + 1, end);
      }
      if (k) {
        if (out.length >= MAX_PAIRS) throw badParams('Too many parameters');
        out.push([decodeComponent(k), decodeComponent(v)]);
      }
    }
    start = end + 1;
  }
  return out;
}

/** Parse a raw query string (or urlencoded body) into normalised nested params. */
export function parseQuery(qs: string): Params {
  if (!qs) return {};
  return buildParams(splitQuery(qs));
}

// ---------------------------------------------------------------------------------------------
// Rails/Rack nested keys

/** Split `a[b][][c]` into ['a', 'b', '', 'c']. Returns null for a key with no usable name. */
function splitKey(name: string): string[] | null {
  // Like Rack: leading brackets are ignored, the first name runs up to the first bracket.
  let i = 0;
  while (i < name.length && (name[i] === '[' || name[i] === ']')) i++;
  let j = i;
  while (j < name.length && name[j] !== '[' && name[j] !== ']') j++;
  if (j === i) return null;
  const parts = [name.slice(i, j)];
  // Rack skips a stray ']' right after the first name.
  while (j < name.length && name[j] === ']') j++;
  while (j < name.length) {
    if (name[j] !== '[') {
      // Trailing garbage such as `a[b]c`: Rack ignores it.
      break;
    }
    const close = name.indexOf(']', j + 1);
    if (close === -1) {
      // `a[b` — Rack treats the rest as part of the key; keep it literal.
      parts[parts.length - 1] += name.slice(j);
      break;
    }
    parts.push(name.slice(j + 1, close));
    j = close + 1;
    if (parts.length > MAX_DEPTH + 1) throw badParams(`Parameters nested deeper than ${MAX_DEPTH} levels`);
  }
  return parts;
}

/** Does `obj` already have the (possibly nested) key path? Used for Rack's array-of-hashes rule. */
function hasPath(obj: Params, path: string[]): boolean {
  let cur: ParamValue = obj;
  for (let i = 0; i < path.length; i++) {
    const k = path[i];
    if (k === '') return i > 0; // `[]` part: the container exists
    if (!isPlainObject(cur) || !Object.hasOwn(cur, k)) return false;
    cur = cur[k];
  }
  return true;
}

function assign(target: Params, path: string[], i: number, value: ParamValue, fullKey: string): void {
  const k = path[i];
  if (FORBIDDEN.has(k)) return;
  const last = i === path.length - 1;
  if (last) {
    target[k] = value;
    return;
  }
  const next = path[i + 1];
  if (next === '') {
    // k[] or k[][sub]…
    let arr = Object.hasOwn(target, k) ? target[k] : undefined;
    if (arr === undefined) arr = target[k] = [];
    else if (!Array.isArray(arr)) throw badParams(`expected Array (got ${typeName(arr)}) for param \`${k}\``);
    if (i + 1 === path.length - 1) {
      arr.push(value);
      return;
    }
    const rest = path.slice(i + 2);
    if (FORBIDDEN.has(rest[0])) return;
    const lastEl = arr[arr.length - 1];
    if (isPlainObject(lastEl) && !hasPath(lastEl, rest)) {
      assign(lastEl, rest, 0, value, fullKey);
    } else {
      const h: Params = {};
      arr.push(h);
      assign(h, rest, 0, value, fullKey);
    }
    return;
  }
  let child = Object.hasOwn(target, k) ? target[k] : undefined;
  if (child === undefined) child = target[k] = {};
  else if (!isPlainObject(child)) throw badParams(`expected Hash (got ${typeName(child)}) for param \`${k}\``);
  assign(child, path, i + 1, value, fullKey);
}

function typeName(v: ParamValue): string {
  if (Array.isArray(v)) return 'Array';
  if (isPlainObject(v)) return 'Hash';
  return 'String';
}

/**
 * Build nested params from decoded [key, value] pairs (query strings, urlencoded and multipart
 * fields), then normalise (integer-keyed objects → arrays).
 */
export function buildParams(pairs: Iterable<readonly [string, ParamValue]>): Params {
  const out: Params = {};
  let nested = false;
  for (const [name, value] of pairs) {
    checkNul(name);
    if (typeof value === 'string') checkNul(value);
    const open = name.indexOf('[');
    if (open === -1 && name.indexOf(']') === -1) {
      // Fast path: a plain key.
      if (!FORBIDDEN.has(name)) out[name] = value;
      continue;
    }
    nested = true;
    const path = splitKey(name);
    if (!path || FORBIDDEN.has(path[0])) continue;
    if (path.length === 1) {
      out[path[0]] = value;
      continue;
    }
    const existing = Object.hasOwn(out, path[0]) ? out[path[0]] : undefined;
    if (existing !== undefined && !isPlainObject(existing) && !Array.isArray(existing)) {
      throw badParams(`expected ${path[1] === '' ? 'Array' : 'Hash'} (got String) for param \`${path[0]}\``);
    }
    assign(out, path, 0, value, name);
  }
  if (nested) {
    // The top level always stays an object; its children are normalised.
    for (const k of Object.keys(out)) out[k] = normalizeTree(out[k], 1);
  }
  return out;
}

/** Turn integer-keyed objects into arrays, recursively; drop forbidden keys; bound depth. */
function normalizeTree(v: ParamValue, depth: number): ParamValue {
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_DEPTH) throw badParams(`Parameters nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeTree(v[i], depth + 1);
    return v;
  }
  const keys = Object.keys(v);
  let allIndex = keys.length > 0;
  for (const k of keys) {
    if (!INDEX_RE.test(k) || Number(k) > MAX_INDEX) { allIndex = false; break; }
  }
  if (allIndex) {
    keys.sort((a, b) => Number(a) - Number(b));
    const arr: ParamValue[] = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) arr[i] = normalizeTree(v[keys[i]], depth + 1);
    return arr;
  }
  for (const k of keys) v[k] = normalizeTree(v[k], depth + 1);
  return v;
}

/**
 * Normalise a parsed JSON body to the same shape as form params: a fresh tree with forbidden keys
 * dropped, integer-keyed objects turned into arrays and depth bounded. A non-object top level is
 * wrapped as `{ _json: value }`, as Rails does.
 */
export function normalizeJson(value: unknown): Params {
  if (isPlainObject(value)) {
    // The top level always stays an object (even with integer keys); its children are normalised.
    const out: Params = {};
    for (const k of Object.keys(value)) {
      checkNul(k);
      if (!FORBIDDEN.has(k)) out[k] = copyJson((value as Record<string, unknown>)[k], 1);
    }
    return out;
  }
  return { _json: copyJson(value, 1) };
}

function copyJson(v: unknown, depth: number): ParamValue {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'string') checkNul(v);
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : null;
  }
  if (depth > MAX_DEPTH) throw badParams(`Parameters nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(v)) {
    const out: ParamValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i], depth + 1);
    return out;
  }
  const src = v as Record<string, unknown>;
  const keys = Object.keys(src).filter((k) => !FORBIDDEN.has(k));
  for (const k of keys) checkNul(k);
  let allIndex = keys.length > 0;
  for (const k of keys) {
    if (!INDEX_RE.test(k) || Number(k) > MAX_INDEX) { allIndex = false; break; }
  }
  if (allIndex) {
    keys.sort((a, b) => Number(a) - Number(b));
    return keys.map((k) => copyJson(src[k], depth + 1));
  }
  const out: Params = {};
  for (const k of keys) out[k] = copyJson(src[k], depth + 1);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Coercion helpers for services (accept form strings and JSON values alike)

const FALSE_VALUES = new Set(['0', 'f', 'F', 'false', 'FALSE', 'off', 'OFF']);

/**
 * Rails' ActiveModel::Type::Boolean: blank (undefined, null, '') → `fallback`; false, 0, '0', 'f',
 * 'F', 'false', 'FALSE', 'off', 'OFF' → false; anything else → true.
 */
export function paramBool(value: ParamValue | undefined): boolean | undefined;
export function paramBool(value: ParamValue | undefined, fallback: boolean): boolean;
export function paramBool(value: ParamValue | undefined, fallback?: boolean): boolean | undefined {
  if (value === undefined || value === null || value === '') return fallback;
  if (value === false || value === 0) return false;
  if (typeof value === 'string') return !FALSE_VALUES.has(value);
  return true;
}

export interface IntOptions {
  min?: number;
  max?: number;
}

/**
 * An integer from a form string or JSON number, like Ruby's `to_i` on the leading digits
 * ('12abc' → 12). Missing, blank or non-numeric → `fallback`. Clamped to [min, max] when given.
 */
export function paramInt(value: ParamValue | undefined): number | undefined;
export function paramInt(value: ParamValue | undefined, fallback: number, opts?: IntOptions): number;
export function paramInt(value: ParamValue | undefined, fallback?: number, opts?: IntOptions): number | undefined;
export function paramInt(value: ParamValue | undefined, fallback?: number, opts?: IntOptions): number | undefined {
  let n: number | undefined;
  if (typeof value === 'number') n = Number.isFinite(value) ? Math.trunc(value) : undefined;
  else if (typeof value === 'string') {
    const m = /^\s*([+-]?\d+)/.exec(value);
    if (m) n = Number.parseInt(m[1], 10);
  }
  if (n === undefined || !Number.isSafeInteger(n)) n = fallback;
  if (n === undefined) return undefined;
  if (opts?.min !== undefined && n < opts.min) n = opts.min;
  if (opts?.max !== undefined && n > opts.max) n = opts.max;
  return n;
}

/** A string from a scalar param (numbers and booleans stringified); objects, arrays, null → `fallback`. */
export function paramString(value: ParamValue | undefined): string | undefined;
export function paramString(value: ParamValue | undefined, fallback: string): string;
export function paramString(value: ParamValue | undefined, fallback?: string): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return fallback;
}

/** Ruby's `Array(x)`: an array as is, missing/null → [], an object → its values, a scalar → [scalar]. */
export function paramArray(value: ParamValue | undefined): ParamValue[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) return Object.values(value);
  return [value];
}

/** paramArray, keeping only the scalar elements, as strings (ids, choices, scopes…). */
export function paramStrings(value: ParamValue | undefined): string[] {
  const out: string[] = [];
  for (const v of paramArray(value)) {
    const s = paramString(v);
    if (s !== undefined) out.push(s);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Ids

const BIGINT_MAX = 9223372036854775807n;
const ID_RE = /^[0-9]{1,19}$/;

/**
 * A row id (snowflake) as PostgreSQL's bigint holds it, canonical: decimal digits only, no sign,
 * no exponent, at most 2^63−1. Anything else ('abc', '-1', '1e3', a 20-digit number) → undefined:
 * no row can have it.
 */
export function paramId(value: ParamValue | undefined): string | undefined {
  const s = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof s !== 'string' || !ID_RE.test(s)) return undefined;
  if (s.length === 19 && BigInt(s) > BIGINT_MAX) return undefined;
  return s;
}

/** paramId for a path or required param: no valid id → 404 "Record not found", as for a missing row. */
export function requireId(value: ParamValue | undefined): string {
  const id = paramId(value);
  if (id === undefined) throw new HttpError(404, 'Record not found');
  return id;
}

/** The valid ids of a list param (`id[]=`), in order, each once, at most `max`; the others left out. */
export function paramIds(value: ParamValue | undefined, max: number): string[] {
  const out = new Set<string>();
  for (const v of paramArray(value)) {
    const id = paramId(v);
    if (id !== undefined) out.add(id);
    if (out.size >= max) break;
  }
  return [...out];
}
