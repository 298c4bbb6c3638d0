/**
 * The filter routes' parameters (v1 and v2), from forms, query strings and JSON alike (Rails'
 * permit: an array or a hash where a scalar is expected is as if not sent).
 */
import type { ParamValue, Params } from '../http/index.ts';
import { paramArray, paramBool, paramInt, paramString, paramStrings } from '../http/index.ts';
import type { FilterInput, KeywordAttributes, KeywordInput, V1FilterInput } from '../services/filters.ts';

export const READ_FILTERS = ['read', 'read:filters'];
export const WRITE_FILTERS = ['write', 'write:filters'];

/** A boolean when given as a scalar, else undefined. */
const bool = (v: ParamValue | undefined) => (paramString(v) === undefined ? undefined : paramBool(v));

/** `expires_in`: undefined when not given, null when blank (never expires), else seconds (Ruby's to_i). */
export function expiresInParam(v: ParamValue | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  const s = paramString(v);
  if (s === undefined) return undefined;
  if (s.trim() === '') return null;
  return paramInt(v) ?? 0;
}

const contextParam = (v: ParamValue | undefined) => (v === undefined ? undefined : paramStrings(v));

function keywordsAttributes(v: ParamValue | undefined): KeywordAttributes[] | undefined {
  if (v === undefined || v === null) return undefined;
  return paramArray(v)
    .filter((k): k is Params => !!k && typeof k === 'object' && !Array.isArray(k))
    .map((k) => ({
      id: paramString(k.id) === '' ? undefined : paramString(k.id),
      keyword: paramString(k.keyword),
      wholeWord: bool(k.whole_word),
      destroy: paramBool(k._destroy, false),
    }));
}

export function filterInput(p: Params): FilterInput {
  return {
    title: paramString(p.title),
    context: contextParam(p.context),
    action: paramString(p.filter_action),
    expiresIn: expiresInParam(p.expires_in),
    keywords: keywordsAttributes(p.keywords_attributes),
  };
}

export function keywordInput(p: Params): KeywordInput {
  return { keyword: paramString(p.keyword), wholeWord: bool(p.whole_word) };
}

export function v1FilterInput(p: Params): V1FilterInput {
  return {
    phrase: paramString(p.phrase),
    context: contextParam(p.context),
    irreversible: bool(p.irreversible),
    wholeWord: bool(p.whole_word),
    expiresIn: expiresInParam(p.expires_in),
  };
}
