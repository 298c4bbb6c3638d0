/**
 * The bad-input sweep: for every route in the route table (test/sweep/routes.ts), generated
 * malformed inputs go through the real server — wrong types, missing and huge fields, NUL and bidi
 * characters, bad and huge ids, nested Rails-style params, wrong content types, malformed JSON and
 * multipart, no token, bad tokens, wrong scopes, app tokens on user routes, malformed Basic auth.
 *
 * It fails on any 5xx, on any table changed by a rejected (4xx) request, on a JSON 4xx without
 * Mastodon's `{"error": "…"}`, and on a route that answers without the auth or scope its table line
 * says it needs. It prints: routes covered / cases / 5xx / stray writes / auth violations.
 *
 * One instance serves every case, sequentially (a stray write must be pinned on one request): a
 * checksum of every table is taken after each case that changed something, and compared after each
 * rejected one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { onExternalServer } from '../helpers/sql.ts';
import { createTestUser, apiRequest, type TestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { buildRouter } from '../../src/api/routes.ts';
import { anyScopeSatisfied } from '../../src/lib/scopes.ts';
import { ROUTES, routeKey, type Kind, type PathKind, type RouteSpec } from './routes.ts';

interface Case {
  route: RouteSpec;
  label: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | FormData;
  /** The statuses this case must get (default: any status below 500). */
  expect?: (status: number) => boolean;
  expectText?: string;
}

interface Fixture {
  alice: TestUser;
  /** An Admin with every scope (admin:read and admin:write too), for the admin API. */
  admin: TestUser;
  /** A domain block and a domain allow, for the admin API's path ids. */
  domainBlockId: string;
  domainAllowId: string;
  /** An e-mail domain block, a canonical e-mail block and an IP block, for the admin API's path ids. */
  emailDomainBlockId: string;
  canonicalEmailBlockId: string;
  ipBlockId: string;
  /** A list of alice's (bob in it). */
  listId: string;
  /** A filter of alice's, its keyword (also a v1 filter) and its status filter. */
  filterId: string;
  filterKeywordId: string;
  filterStatusId: string;
  /** A featured tag of alice's. */
  featuredTagId: string;
  /** A local custom emoji, for the admin API's path ids. */
  customEmojiId: string;
  webhookId: string;
  blocklistSubscriptionId: string;
  blocklistEntryId: string;
  /** The tag #sweep and a preview card, for the admin trends' path ids. */
  tagId: string;
  previewCardId: string;
  /** alice's report about bob, for the admin API's path ids. */
  reportId: string;
  /** A role below the admin's, for the roles API's path ids. */
  roleId: string;
  bob: TestUser;
  carol: TestUser;
  /** A public status of bob's. */
  statusId: string;
  /** An unattached media attachment of alice's. */
  mediaId: string;
  /** The poll of another public status of bob's (alice may vote on it). */
  pollId: string;
  /** Alice's direct-message conversation with bob. */
  conversationId: string;
  notificationId: string;
  notificationGroupKey: string;
  /** alice's notification request from bob (his direct mention, held by the default policy). */
  notificationRequestId: string;
  asyncRefreshId: string;
  /** A scheduled status of alice's, a day ahead. */
  scheduledStatusId: string;
  /** A token of alice (no role) with the admin scopes: the admin API must say 403. */
  plainAdminScopes: string;
  /** A full token of a user whose e-mail address is unconfirmed. */
  unconfirmedToken: string;
  /** Tokens of alice with one top-level scope each. */
  scoped: Record<string, string>;
  appToken: string;
  clientId: string;
  clientSecret: string;
}

// ---------------------------------------------------------------------------------------------
// Malformed values

const HUGE = 'x'.repeat(100_000);
const BIDI = '\u202Eevil\u202C\u2066x\u2069';

/** Path segments no route may choke on (already %-encoded). */
const BAD_IDS = [
  '99999999999999999999', // 20 digits: more than bigint holds
  '9223372036854775808', // bigint max + 1
  '18446744073709551616',
  '1'.repeat(300),
  '-1',
  '0',
  'abc',
  '1e3',
  '1.5',
  '0x10',
  '%00',
  '1%00',
  '%E2%80%AE1',
  '%20',
  '%ZZ',
];
const BAD_MEDIA = ['x%00.png', '..%2F..%2Fetc%2Fpasswd', 'a/../../b.png', '%ZZ.png', `${'a'.repeat(2000)}.png`, 'avatars/1/original/x.png'];

/** Wrong JSON values, sent param by param. */
const JSON_VALUES: Array<[string, unknown]> = [
  ['number', 86_400],
  ['true', true],
  ['null', null],
  ['nested array', ['a', ['b', ['c']]]],
  ['nested object', { a: { b: ['c'] } }],
  ['NUL', 'a\u0000b'],
  ['huge string', HUGE],
  ['20-digit id', '99999999999999999999'],
  ['19-digit id past bigint', '9999999999999999999'],
  ['lone surrogate', 'a\ud800b'],
];
/** Wrong JSON values, sent for all of a route's params at once. */
const ALL_JSON_VALUES: Array<[string, unknown]> = [
  ['negative', -1],
  ['huge number', 1e308],
  ['empty array', []],
  ['empty object', {}],
  ['empty string', ''],
  ['bidi', BIDI],
  ['1e3', '1e3'],
];

/** Wrong form / query encodings of param `p` (raw, already %-encoded). */
function formVariants(p: string, inQuery: boolean): Array<[string, string]> {
  return [
    ['NUL', `${p}=a%00b`],
    ['bidi', `${p}=%E2%80%AEevil%E2%80%AC`],
    ['huge', `${p}=${inQuery ? 'x'.repeat(3000) : HUGE}`],
    ['array', `${p}[]=x&${p}[]=y`],
    ['nested', `${p}[a][b][]=x`],
    ['scalar then hash', `${p}=1&${p}[a]=2`],
    ['20-digit id', `${p}=99999999999999999999`],
  ];
}

/** The same for all of a route's params at once (what a single param rarely changes). */
function allFormVariants(names: string[]): Array<[string, string]> {
  const each = (f: (p: string) => string) => names.map(f).join('&');
  return [
    ['empty', each((p) => `${p}=`)],
    ['no value', each((p) => p)],
    ['only NUL', each((p) => `${p}=%00`)],
    ['hash of arrays', each((p) => `${p}[0][]=x&${p}[1][a]=y`)],
    ['NUL key', each((p) => `${p}[%00]=x`)],
    ['proto key', each((p) => `${p}[__proto__][x]=1`)],
    ['negative', each((p) => `${p}=-1`)],
    ['1e3', each((p) => `${p}=1e3`)],
    ['bad percent', each((p) => `${p}=%ZZ%E0%A4`)],
  ];
}

/** Extra values by kind (beyond the generic ones). */
function kindValues(kind: Kind): Array<[string, unknown]> {
  switch (kind) {
    case 'ids':
      return [['ids', ['99999999999999999999', 'abc', '-1', '1e3', 'a\u0000']], ['many ids', Array.from({ length: 500 }, (_, i) => String(i))]];
    case 'strings':
      return [['strings with NUL', ['en', 'a\u0000']], ['many strings', Array.from({ length: 1000 }, () => 'xx')]];
    case 'fields':
      return [
        ['fields', [{ name: 'a\u0000', value: 'b' }, { name: HUGE, value: HUGE }]],
        ['too many fields', Array.from({ length: 50 }, (_, i) => ({ name: `n${i}`, value: 'v' }))],
        ['fields by index', { '0': { name: 1, value: [] }, '99999999999': { name: 'x' } }],
      ];
    case 'hash':
      return [['hash', { privacy: 'a\u0000', sensitive: {}, language: ['xx'] }], ['hash huge', { privacy: HUGE, language: HUGE }]];
    case 'url':
      return [['javascript url', 'javascript:alert(1)'], ['url with NUL', 'https://a\u0000.example/'], ['relative url', '/x']];
    case 'domain':
      return [['domain with NUL', 'a\u0000.example'], ['domain huge', `${'a'.repeat(300)}.example`], ['domain unicode', 'ex\u202Eample.com']];
    case 'scopes':
      return [['unknown scope', 'read admin:everything'], ['scopes with NUL', 'read\u0000write']];
    case 'int':
      return [['int as float', 1.5], ['int overflow', 2 ** 64]];
    case 'file':
      return [];
    default:
      return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Case generation

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

function fillPath(route: RouteSpec, fx: Fixture, override?: { name: string; value: string }): string {
  return route.path.replace(/:([a-z_]+)|\*$/g, (m, name: string | undefined) => {
    const key = name ?? '*';
    if (override && override.name === key) return override.value;
    const kind: PathKind = route.pathParams![key];
    if (kind === 'account') return fx.bob.account.id;
    if (kind === 'follow_request') return fx.carol.account.id;
    if (kind === 'username') return fx.bob.account.username;
    if (kind === 'status') return fx.statusId;
    if (kind === 'attachment') return fx.mediaId;
    if (kind === 'poll') return fx.pollId;
    if (kind === 'scheduled_status') return fx.scheduledStatusId;
    if (kind === 'domain_block') return fx.domainBlockId;
    if (kind === 'domain_allow') return fx.domainAllowId;
    if (kind === 'email_domain_block') return fx.emailDomainBlockId;
    if (kind === 'canonical_email_block') return fx.canonicalEmailBlockId;
    if (kind === 'ip_block') return fx.ipBlockId;
    if (kind === 'conversation') return fx.conversationId;
    if (kind === 'notification') return fx.notificationId;
    if (kind === 'notification_group') return encodeURIComponent(fx.notificationGroupKey);
    if (kind === 'notification_request') return fx.notificationRequestId;
    if (kind === 'async_refresh') return fx.asyncRefreshId;
    if (kind === 'list') return fx.listId;
    if (kind === 'featured_tag') return fx.featuredTagId;
    if (kind === 'filter') return fx.filterId;
    if (kind === 'filter_keyword') return fx.filterKeywordId;
    if (kind === 'filter_status') return fx.filterStatusId;
    if (kind === 'custom_emoji') return fx.customEmojiId;
    if (kind === 'webhook') return fx.webhookId;
    if (kind === 'blocklist_subscription') return fx.blocklistSubscriptionId;
    if (kind === 'blocklist_entry') return fx.blocklistEntryId;
    if (kind === 'tag') return fx.tagId;
    if (kind === 'tag_name') return 'birds';
    if (kind === 'preview_card') return fx.previewCardId;
    if (kind === 'report') return fx.reportId;
    if (kind === 'role') return fx.roleId;
    return 'avatars/1/original/none.png';
  });
}

function paramsIn(route: RouteSpec): 'query' | 'body' {
  return route.in ?? (route.method === 'GET' || route.method === 'DELETE' ? 'query' : 'body');
}

/** The token that satisfies the route (alice's full token, or the app token for sign-up). */
function goodToken(route: RouteSpec, fx: Fixture): string | undefined {
  if (route.auth === 'app') return fx.appToken;
  if (route.auth === 'public' || route.auth === 'client') return undefined;
  if (route.auth === 'admin') return fx.admin.token;
  return fx.alice.token;
}

function authHeaders(route: RouteSpec, fx: Fixture): Record<string, string> {
  if (route.auth === 'client') return { authorization: `Basic ${b64(`${fx.clientId}:${fx.clientSecret}`)}` };
  const t = goodToken(route, fx);
  return t ? { authorization: `Bearer ${t}` } : {};
}

const is4xx = (s: number) => s >= 400 && s < 500;
const isOneOf = (...codes: number[]) => (s: number) => codes.includes(s);

function authCases(route: RouteSpec, fx: Fixture): Case[] {
  const path = fillPath(route, fx);
  const userRoute = route.auth === 'user' || route.auth === 'admin';
  // The streaming API answers every token problem 401, as Mastodon's streaming server (scopes included).
  const streaming = route.auth === 'streaming';
  const needsToken = userRoute || streaming || route.auth === 'token' || route.auth === 'app';
  const checksToken = needsToken || route.auth === 'public+scope';
  const cases: Case[] = [];
  const add = (label: string, headers: Record<string, string>, expect?: (s: number) => boolean, query?: string) =>
    cases.push({ route, label: `auth: ${label}`, path, headers, query, expect });
  // Mastodon's admin API answers a request without a token 403 "This action is not allowed".
  const withoutToken = route.auth === 'admin' ? isOneOf(403) : needsToken ? isOneOf(401) : undefined;
  add('no token', {}, withoutToken);
  add('empty bearer', { authorization: 'Bearer' }, withoutToken);
  add('unknown token', { authorization: 'Bearer nope' }, checksToken ? isOneOf(401) : undefined);
  add('bearer with a tab', { authorization: 'Bearer a\tb' }, needsToken ? is4xx : undefined);
  add('two bearer words', { authorization: 'Bearer a b' }, needsToken ? is4xx : undefined);
  add('access_token array', {}, needsToken ? is4xx : undefined, 'access_token[]=x&access_token[]=y');
  add('access_token NUL', {}, checksToken ? is4xx : undefined, 'access_token=%00');
  add('Basic: not base64', { authorization: 'Basic %%%' }, needsToken ? is4xx : undefined);
  add('Basic: bad percent-encoding', { authorization: `Basic ${b64('%zz:%E0%A4')}` }, needsToken ? is4xx : undefined);
  if (route.auth === 'client') {
    add('Basic: no colon', { authorization: `Basic ${b64('nocolon')}` }, is4xx);
    add('Basic: NUL', { authorization: `Basic ${b64('a\u0000:b\u0000')}` }, is4xx);
    add('Basic: empty', { authorization: 'Basic' }, is4xx);
    add('Basic: huge', { authorization: `Basic ${b64(`${'a'.repeat(3000)}:b`)}` }, is4xx);
  }
  if (userRoute || streaming || route.auth === 'public+scope') {
    const scopes = route.scopes ?? [];
    for (const [scope, token] of Object.entries(fx.scoped)) {
      if (scopes.length > 0 && !anyScopeSatisfied([scope], scopes)) add(`wrong scope (${scope} token)`, { authorization: `Bearer ${token}` }, isOneOf(streaming ? 401 : 403));
    }
  }
  if (streaming) add('app token on a streaming route', { authorization: `Bearer ${fx.appToken}` }, isOneOf(401));
  if (userRoute) add('app token on a user route', { authorization: `Bearer ${fx.appToken}` }, isOneOf(403, 422));
  if (userRoute && !route.allowsUnconfirmed) add('unconfirmed user', { authorization: `Bearer ${fx.unconfirmedToken}` }, isOneOf(403));
  if (route.auth === 'admin') add('a user without the permission', { authorization: `Bearer ${fx.plainAdminScopes}` }, isOneOf(403));
  if (route.auth === 'app') add('user token on an app route', { authorization: `Bearer ${fx.alice.token}` }, isOneOf(403));
  return cases;
}

function pathCases(route: RouteSpec, fx: Fixture): Case[] {
  const cases: Case[] = [];
  for (const [name, kind] of Object.entries(route.pathParams ?? {})) {
    const headers = authHeaders(route, fx);
    for (const bad of kind === 'media' ? BAD_MEDIA : BAD_IDS) {
      // Not an id at all → 404 (a well-formed id of no row, '0', may meet a 422 first).
      // A tag's page exists for any name (empty when no post has it): only never a 500.
      const expect = kind === 'media' || kind === 'tag_name' || route.unknownIdOk ? undefined : kind === 'username' || bad === '0' ? is4xx : isOneOf(404);
      cases.push({ route, label: `path ${name}=${bad.slice(0, 24)}`, path: fillPath(route, fx, { name, value: bad }), headers, expect });
    }
    // The viewer's own account: following, unfollowing, removing, blocking oneself…
    if (kind === 'account') cases.push({ route, label: `path ${name}=self`, path: fillPath(route, fx, { name, value: fx.alice.account.id }), headers });
  }
  return cases;
}

function paramCases(route: RouteSpec, fx: Fixture): Case[] {
  const cases: Case[] = [];
  const path = fillPath(route, fx);
  const auth = authHeaders(route, fx);
  const where = paramsIn(route);
  for (const [name, kind] of Object.entries(route.params ?? {})) {
    if (kind === 'file') {
      const files: Array<[string, Blob]> = [
        ['not an image', new Blob(['<svg onload=alert(1)>'], { type: 'image/png' })],
        ['truncated PNG', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])], { type: 'image/png' })],
        ['empty file', new Blob([], { type: 'image/png' })],
      ];
      for (const [label, blob] of files) {
        const form = new FormData();
        form.append(name, blob, 'x.png');
        cases.push({ route, label: `file ${name}: ${label}`, path, headers: auth, body: form });
      }
      const form = new FormData();
      form.append(name, 'a string, not a file');
      cases.push({ route, label: `file ${name}: a plain field`, path, headers: auth, body: form });
      continue;
    }
    for (const [label, raw] of formVariants(name, where === 'query')) {
      if (where === 'query') cases.push({ route, label: `query ${name}: ${label}`, path, headers: auth, query: raw });
      else cases.push({ route, label: `form ${name}: ${label}`, path, headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: raw });
    }
    if (where === 'body') {
      for (const [label, value] of [...JSON_VALUES, ...kindValues(kind)]) {
        cases.push({ route, label: `json ${name}: ${label}`, path, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ [name]: value }) });
      }
    } else {
      for (const [label, value] of kindValues(kind)) {
        const qs = Array.isArray(value)
          ? value.map((v) => `${name}[]=${encodeURIComponent(String(v))}`).join('&')
          : `${name}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value))}`;
        cases.push({ route, label: `query ${name}: ${label}`, path, headers: auth, query: qs });
      }
    }
  }
  const names = Object.entries(route.params ?? {}).filter(([, k]) => k !== 'file').map(([n]) => n);
  if (names.length === 0) return cases;
  for (const [label, raw] of allFormVariants(names)) {
    if (where === 'query') cases.push({ route, label: `query all: ${label}`, path, headers: auth, query: raw });
    else cases.push({ route, label: `form all: ${label}`, path, headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: raw });
  }
  if (where === 'body') {
    for (const [label, value] of ALL_JSON_VALUES) {
      const body = JSON.stringify(Object.fromEntries(names.map((n) => [n, value])));
      cases.push({ route, label: `json all: ${label}`, path, headers: { ...auth, 'content-type': 'application/json' }, body });
    }
  }
  return cases;
}

/** Whole-body malformations, for routes that take a body (and, harmlessly, for the others). */
function bodyCases(route: RouteSpec, fx: Fixture): Case[] {
  if (route.method === 'GET') return [];
  const path = fillPath(route, fx);
  const auth = authHeaders(route, fx);
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  const deepObject = `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`;
  const bodies: Array<[string, string, string | Uint8Array]> = [
    ['malformed JSON', 'application/json', '{"a":'],
    ['JSON: trailing garbage', 'application/json', '{"a":1}x'],
    ['JSON: an array', 'application/json', '[1,2,3]'],
    ['JSON: a string', 'application/json', '"x"'],
    ['JSON: null', 'application/json', 'null'],
    ['JSON: 5000 levels', 'application/json', deep],
    ['JSON: 200 levels of objects', 'application/json', deepObject],
    ['JSON: NUL key', 'application/json', '{"\\u0000":1,"a\\u0000b":{"\\u0000":[1]}}'],
    ['JSON: proto key', 'application/json', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'],
    ['JSON: lone surrogate', 'application/json', '{"a":"\\ud800"}'],
    ['JSON: invalid UTF-8', 'application/json; charset=utf-8', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['+json type', 'application/activity+json', '{"type":"Follow"}'],
    ['text/plain', 'text/plain', '{"a":1}'],
    ['XML', 'application/xml', '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'],
    ['no content type', '', 'a=1'],
    ['garbage content type', ';;;=;', 'a=1'],
    ['form: scalar then hash', 'application/x-www-form-urlencoded', 'a=1&a[b]=2'],
    ['form: hash then array', 'application/x-www-form-urlencoded', 'a[b]=1&a[]=2'],
    ['form: 40 levels', 'application/x-www-form-urlencoded', `a${'[b]'.repeat(40)}=1`],
    ['form: 20000 pairs', 'application/x-www-form-urlencoded', Array.from({ length: 20_000 }, (_, i) => `k${i}=v`).join('&')],
    ['form: only separators', 'application/x-www-form-urlencoded', '&&&==&='],
    ['multipart: no boundary', 'multipart/form-data', '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'],
    ['multipart: wrong boundary', 'multipart/form-data; boundary=y', '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'],
    ['multipart: unterminated', 'multipart/form-data; boundary=x', '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\n1'],
    ['multipart: no disposition', 'multipart/form-data; boundary=x', '--x\r\ncontent-type: text/plain\r\n\r\n1\r\n--x--\r\n'],
    ['multipart: NUL name', 'multipart/form-data; boundary=x', '--x\r\ncontent-disposition: form-data; name="a\u0000"\r\n\r\n\u0000\r\n--x--\r\n'],
  ];
  return bodies.map(([label, type, body]) => ({ route, label: `body: ${label}`, path, headers: type ? { ...auth, 'content-type': type } : auth, body }));
}

// ---------------------------------------------------------------------------------------------
// Running

/** A checksum of every table but the queues, caches and rate-limit counters (every request counts, on PostgreSQL in a table). */
async function tableChecksum(roost: TestRoost): Promise<Map<string, string>> {
  const sql = roost.services.db.sql;
  const tables = (
    await sql.query<{ table_name: string }>(
      `select table_name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE'
          and table_name not in ('jobs', 'fedify_kv', 'mikro_orm_migrations', 'rate_limits') order by table_name`,
    )
  ).map((r) => r.table_name);
  const union = tables
    // Order-independent: the count and the sum of the rows' hashes.
    .map((t) => `select '${t}' as t, count(*)::text || ':' || coalesce(sum(hashtext(x::text)::bigint), 0)::text as sum from "${t}" x`)
    .join(' union all ');
  const rows = await sql.query<{ t: string; sum: string }>(union);
  return new Map(rows.map((r) => [r.t, r.sum]));
}

/**
 * The next transaction id PostgreSQL will assign. Only a transaction that writes takes an id, so
 * while this stays put nothing was written anywhere: the checksum is needed only when it moves.
 */
async function nextXid(roost: TestRoost): Promise<string> {
  const [row] = await roost.services.db.sql.query<{ x: string }>(`select pg_snapshot_xmax(pg_current_snapshot())::text as x`);
  return row.x;
}

function changedTables(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [t, v] of b) if (a.get(t) !== v) out.push(t);
  return out;
}

async function send(roost: TestRoost, c: Case): Promise<{ status: number; type: string; text: string }> {
  const url = roost.at(c.path) + (c.query ? `?${c.query}` : '');
  const init: RequestInit = { method: c.route.method, headers: c.headers, redirect: 'manual' };
  if (c.body !== undefined) init.body = c.body as RequestInit["body"];
  const res = await fetch(url, init);
  // A stream that opened (a valid request to the streaming API) is not read to its end.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, type: 'text/event-stream', text: '' };
  }
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text };
}

export interface SweepReport {
  routes: number;
  cases: number;
  serverErrors: string[];
  strayWrites: string[];
  violations: string[];
  badShapes: string[];
  sendMs: number;
  slowest: Array<[number, string]>;
  checkMs: number;
}

/** Until no job is running or due (timers due later, such as a mute's expiry, stay queued). */
async function jobsIdle(roost: TestRoost): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const busy = await roost.services.db.sql.query(`select 1 from jobs where state = 'running' or (state = 'pending' and run_at <= now()) limit 1`);
    if (busy.length === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function runSweep(roost: TestRoost, fx: Fixture): Promise<SweepReport> {
  const report: SweepReport = { routes: 0, cases: 0, serverErrors: [], strayWrites: [], violations: [], badShapes: [], sendMs: 0, checkMs: 0, slowest: [] };
  let beforeXid = await nextXid(roost);
  let before = await tableChecksum(roost);
  // SWEEP_ONLY=<substring> sweeps only the matching routes (while fixing one; the count then fails).
  const only = process.env.SWEEP_ONLY;
  for (const route of ROUTES) {
    if (only && !routeKey(route).includes(only)) continue;
    report.routes++;
    // PUT and PATCH of update_credentials are one handler (Router.update): its params are swept once.
    const twin = route.sameHandlerAs !== undefined;
    const cases = [...authCases(route, fx), ...pathCases(route, fx), ...(twin ? [] : paramCases(route, fx)), ...bodyCases(route, fx)];
    for (const c of cases) {
      report.cases++;
      const name = `${routeKey(route)} [${c.label}]`;
      let r: { status: number; type: string; text: string };
      const t1 = performance.now();
      try {
        r = await send(roost, c);
      } catch (e) {
        report.serverErrors.push(`${name} → connection error ${(e as Error).message}`);
        continue;
      }
      const byDesign = route.unavailable === true && r.status === 503 && r.text === '{"error":"Service Unavailable"}';
      if (r.status >= 500 && !byDesign) report.serverErrors.push(`${name} → ${r.status} ${r.text.slice(0, 120)}`);
      else if (c.expect && !c.expect(r.status)) report.violations.push(`${name} → ${r.status} ${r.text.slice(0, 120)}`);
      if (r.status >= 400 && r.type.startsWith('application/json')) {
        let body: unknown;
        try {
          body = JSON.parse(r.text);
        } catch {
          body = null;
        }
        if (typeof (body as { error?: unknown } | null)?.error !== 'string') report.badShapes.push(`${name} → ${r.status} ${r.text.slice(0, 120)}`);
      }
      report.sendMs += performance.now() - t1;
      report.slowest.push([performance.now() - t1, name]);
      const t2 = performance.now();
      if (r.status >= 400) {
        const xid = await nextXid(roost);
        if (xid !== beforeXid) {
          // Something wrote (perhaps only a queue or cache table): which tables changed?
          beforeXid = xid;
          const after = await tableChecksum(roost);
          const changed = changedTables(before, after);
          if (changed.length) report.strayWrites.push(`${name} → ${r.status} changed ${changed.join(', ')}`);
          before = after;
        }
      } else {
        // A request that succeeded may write, and may leave jobs that write: let the due ones finish.
        await jobsIdle(roost);
        beforeXid = await nextXid(roost);
        before = await tableChecksum(roost);
      }
      report.checkMs += performance.now() - t2;
    }
  }
  return report;
}

async function setUp(roost: TestRoost): Promise<Fixture> {
  const alice = await createTestUser(roost, 'alice', { scopes: ['read', 'write', 'follow', 'push'] });
  const bob = await createTestUser(roost, 'bob');
  const carol = await createTestUser(roost, 'carol');
  const una = await createTestUser(roost, 'una', { confirmed: false });
  // alice is locked and carol asked to follow her: a follow request to authorize or reject.
  expect((await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
  expect((await carol.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  const scoped: Record<string, string> = {};
  for (const scope of ['read', 'write', 'follow', 'push', 'profile']) {
    scoped[scope] = (await issueAccessToken(roost.services, { applicationId: null, userId: alice.user.id, scopes: [scope] })).token;
  }
  const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'sweep', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write follow push' } });
  expect(app.status).toBe(200);
  const grant = await apiRequest(roost, '/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: app.body.client_id, client_secret: app.body.client_secret, scope: 'read write' },
  });
  expect(grant.status).toBe(200);
  const posted = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'Hello #sweep @alice', visibility: 'public' } });
  expect(posted.status).toBe(200);
  const upload = new FormData();
  upload.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer())], { type: 'image/png' }), 'x.png');
  const media = await alice.api('/api/v1/media', { method: 'POST', body: upload });
  expect(media.status).toBe(200);
  const withPoll = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'Which?', poll: { options: ['this', 'that'], expires_in: 3600 } } });
  expect(withPoll.status).toBe(200);
  const dm = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: '@alice psst', visibility: 'direct' } });
  expect(dm.status).toBe(200);
  await settled(roost);
  const conversations = await alice.api('/api/v1/conversations');
  expect(conversations.body.map((c: { last_status: { id: string } }) => c.last_status.id)).toEqual([dm.body.id]);
  const scheduled = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Later', scheduled_at: new Date(roost.services.clock.now().getTime() + 86_400_000).toISOString() } });
  expect(scheduled.status).toBe(200);
  const ADMIN_SCOPES = ['read', 'write', 'follow', 'push', 'admin:read', 'admin:write'];
  const admin = await createTestUser(roost, 'sweepadmin', { role: 'Admin', scopes: ADMIN_SCOPES });
  const plainAdminScopes = (await issueAccessToken(roost.services, { applicationId: null, userId: alice.user.id, scopes: ADMIN_SCOPES })).token;
  const block = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'blocked.sweep.example', severity: 'silence' } });
  expect(block.status).toBe(200);
  const allow = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: 'allowed.sweep.example' } });
  expect(allow.status).toBe(200);
  const emailBlock = await admin.api('/api/v1/admin/email_domain_blocks', { method: 'POST', body: { domain: 'spam.sweep.example' } });
  expect(emailBlock.status).toBe(200);
  const canonicalBlock = await admin.api('/api/v1/admin/canonical_email_blocks', { method: 'POST', body: { email: 'spammer@sweep.example' } });
  expect(canonicalBlock.status).toBe(200);
  const ipBlock = await admin.api('/api/v1/admin/ip_blocks', { method: 'POST', body: { ip: '192.0.2.0/24', severity: 'sign_up_block' } });
  expect(ipBlock.status).toBe(200);
  expect((await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  const list = await alice.api('/api/v1/lists', { method: 'POST', body: { title: 'sweep' } });
  expect(list.status).toBe(200);
  expect((await alice.api(`/api/v1/lists/${list.body.id}/accounts`, { method: 'POST', body: { account_ids: [bob.account.id] } })).status).toBe(200);
  const filter = await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'sweep', context: ['home'], keywords_attributes: [{ keyword: 'sweep' }] } });
  expect(filter.status).toBe(200);
  const filterStatus = await alice.api(`/api/v2/filters/${filter.body.id}/statuses`, { method: 'POST', body: { status_id: posted.body.id } });
  expect(filterStatus.status).toBe(200);
  const featured = await alice.api('/api/v1/featured_tags', { method: 'POST', body: { name: 'sweep' } });
  expect(featured.status).toBe(200);
  const emojiForm = new FormData();
  emojiForm.append('shortcode', 'sweepmoji');
  emojiForm.append('image', new Blob([new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 4, background: '#00ff00' } }).png().toBuffer())], { type: 'image/png' }), 'e.png');
  const emoji = await admin.api('/api/v1/admin/custom_emojis', { method: 'POST', body: emojiForm });
  const role = await admin.api('/api/v1/admin/roles', { method: 'POST', body: { name: 'Sweeper', position: 5, permissions: '16' } });
  if (role.status !== 200) throw new Error(`sweep fixture: role ${role.status} ${JSON.stringify(role.body)}`);
  expect(emoji.status).toBe(200);
  // An event nothing in the set-up causes: its deliveries (to a host that cannot be reached) would keep the queue busy.
  const webhook = await admin.api('/api/v1/admin/webhooks', { method: 'POST', body: { url: 'https://hooks.sweep.example/in', events: ['account.approved'] } });
  expect(webhook.status).toBe(200);
  // A subscription whose list cannot be fetched (nothing listens on port 9), and an entry in its queue.
  const subscription = await admin.api('/api/v1/admin/blocklist_subscriptions', { method: 'POST', body: { url: 'http://127.0.0.1:9/list.csv' } });
  expect(subscription.status).toBe(200);
  const blocklistEntryId = roost.services.ids.next();
  await roost.services.db.sql.query(
    `insert into blocklist_entries (id, subscription_id, domain, severity, state, created_at, updated_at) values ($1, $2, 'listed.sweep.example', 'silence', 'pending', now(), now())`,
    [blocklistEntryId, subscription.body.id],
  );
  const report = await alice.api('/api/v1/reports', { method: 'POST', body: { account_id: bob.account.id, status_ids: [posted.body.id], comment: 'sweep' } });
  expect(report.status).toBe(200);
  const notifications = (await alice.api('/api/v1/notifications')).body as { id: string; type: string; group_key: string }[];
  const followRequest = notifications.find((n) => n.type === 'follow_request')!;
  const mention = notifications.find((n) => n.type === 'mention')!;
  expect(followRequest && mention).toBeTruthy();
  const requests = (await alice.api('/api/v1/notifications/requests')).body as { id: string; account: { id: string } }[];
  expect(requests.map((r) => r.account.id)).toEqual([bob.account.id]);
  const [{ id: tagId }] = await roost.services.db.sql.query<{ id: string }>(`select id::text from tags where name = 'sweep'`);
  const previewCardId = roost.services.ids.next();
  await roost.services.db.sql.query(`insert into preview_cards (id, url, title, created_at, updated_at) values ($1, 'https://card.sweep.example/', 'Sweep', now(), now())`, [previewCardId]);
  // A thread's finished refresh (services/threads.ts), as opening a remote thread leaves one.
  await roost.services.db.sql.query(
    `insert into thread_refreshes (root_status_id, refresh_id, state, result_count, started_at, finished_at) values ($1, 'sweepRefresh', 'finished', 2, now(), now())`,
    [posted.body.id],
  );
  const fx: Fixture = { notificationRequestId: requests[0]!.id, notificationId: followRequest.id, notificationGroupKey: mention.group_key, alice, admin, filterId: filter.body.id, filterKeywordId: filter.body.keywords[0].id, filterStatusId: filterStatus.body.id, customEmojiId: emoji.body.id, webhookId: webhook.body.id, blocklistSubscriptionId: subscription.body.id, blocklistEntryId, featuredTagId: featured.body.id, domainBlockId: block.body.id, domainAllowId: allow.body.id, listId: list.body.id, plainAdminScopes, bob, carol, statusId: posted.body.id, mediaId: media.body.id, pollId: withPoll.body.poll.id, conversationId: conversations.body[0].id, scheduledStatusId: scheduled.body.id, unconfirmedToken: una.token, scoped, appToken: grant.body.access_token, clientId: app.body.client_id, clientSecret: app.body.client_secret, tagId: tagId!, previewCardId, reportId: report.body.id, emailDomainBlockId: emailBlock.body.id, canonicalEmailBlockId: canonicalBlock.body.id, ipBlockId: ipBlock.body.id, roleId: role.body.id, asyncRefreshId: 'sweepRefresh' };
  // Each token's first use of the day records activity (a write): do it now, not in a case.
  for (const token of [alice.token, bob.token, carol.token, una.token, ...Object.values(scoped), fx.appToken, admin.token, plainAdminScopes]) {
    await apiRequest(roost, '/api/v1/apps/verify_credentials', { token });
  }
  await settled(roost);
  return fx;
}

describe('bad-input sweep', () => {
  let roost: TestRoost;
  let fx: Fixture;

  beforeAll(async () => {
    roost = await startTestRoost();
    fx = await setUp(roost);
  });
  afterAll(async () => {
    await roost?.close();
  });

  it('the route table lists exactly the routes the router registers', () => {
    const registered = buildRouter(roost.services, roost.federation).routes().map((r) => routeKey({ method: r.method, path: r.pattern })).sort();
    const table = ROUTES.map(routeKey).sort();
    expect(new Set(table).size).toBe(table.length);
    // A route missing here must be added to test/sweep/routes.ts (its auth, scopes and params).
    expect(registered.filter((r) => !table.includes(r))).toEqual([]);
    expect(table.filter((r) => !registered.includes(r))).toEqual([]);
  });

  it('every malformed input gets a 4xx with an error body, and a rejected request writes nothing', async () => {
    const t0 = performance.now();
    const r = await runSweep(roost, fx);
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(
      `[sweep] routes ${r.routes}/${ROUTES.length} · cases ${r.cases} · 5xx ${r.serverErrors.length} · stray writes ${r.strayWrites.length}` +
        ` · auth/scope violations ${r.violations.length} · error bodies not {"error"} ${r.badShapes.length} · ${s} s (requests ${(r.sendMs / 1000).toFixed(1)} s, checks ${(r.checkMs / 1000).toFixed(1)} s) on ${onExternalServer() ? 'a PostgreSQL server' : 'the embedded PostgreSQL'}`,
    );
    for (const [title, list] of [['5xx', r.serverErrors], ['stray writes', r.strayWrites], ['violations', r.violations], ['bad shapes', r.badShapes]] as const) {
      if (list.length) console.log(`[sweep] ${title}:\n  ${list.slice(0, 200).join('\n  ')}`);
    }
    console.log('[sweep] slowest cases:\n' + r.slowest.sort((a, b) => b[0] - a[0]).slice(0, 5).map(([ms, n]) => `${ms.toFixed(0)} ms ${n}`).join('\n'));
    expect(r.routes).toBe(ROUTES.length);
    expect(r.serverErrors).toEqual([]);
    expect(r.strayWrites).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.badShapes).toEqual([]);
  }, 1_500_000);
});
