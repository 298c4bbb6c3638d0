/**
 * Stream names as Mastodon's streaming server knows them, resolved to the keys events are
 * published under (src/streaming/store.ts) and the `stream` array frames carry:
 *
 *   user                  user:<accountId>              ["user"]
 *   user:notification     user:notification:<accountId> ["user:notification"]
 *   public[:local|:remote][:media]   the same name       ["public:local"] …
 *   hashtag / hashtag:local (tag)    hashtag[:local]:<lowercased tag>  ["hashtag","Tag"]
 *   list (list)           list:<listId>                 ["list","<id>"]
 *   direct                direct:<accountId>            ["direct"]
 *
 * Errors carry Mastodon's messages and statuses (RequestError 400, AuthenticationError 401).
 */
import type { Services } from '../context.ts';
import { anyScopeSatisfied } from '../lib/scopes.ts';

export class StreamError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** A subscription refused for the token's scopes: a WebSocket gets the error, then is closed. */
export class StreamScopeError extends StreamError {
  constructor() {
    super(401, 'Access token does not have the required scopes');
  }
}

export interface ResolvedStream {
  /** The key events are published under. */
  key: string;
  /** The `stream` array of this subscription's frames. */
  stream: string[];
  /** The filter context of its statuses (Mastodon: home for user/list, public for public/hashtag). */
  context: 'home' | 'public' | 'notifications' | 'thread';
}

export const STREAM_NAMES = [
  'user',
  'user:notification',
  'public',
  'public:media',
  'public:local',
  'public:local:media',
  'public:remote',
  'public:remote:media',
  'hashtag',
  'hashtag:local',
  'list',
  'direct',
] as const;

const PUBLIC = new Set(['public', 'public:media', 'public:local', 'public:local:media', 'public:remote', 'public:remote:media']);

/** Mastodon's checkScopes: notification streams need read or read:notifications, the others read or read:statuses. */
export function requiredScopes(name: string): string[] {
  return name.startsWith('user:notification') ? ['read', 'read:notifications'] : ['read', 'read:statuses'];
}

export function hashtagKey(tag: string, local: boolean): string {
  return `hashtag${local ? ':local' : ''}:${tag.toLowerCase()}`;
}

/** Resolves a subscription for `accountId` (whose token has `scopes`); throws StreamError. */
export async function resolveStream(
  services: Services,
  accountId: string,
  scopes: readonly string[],
  name: unknown,
  params: { tag?: unknown; list?: unknown },
): Promise<ResolvedStream> {
  // Scopes first, as Mastodon's checkScopes runs before the channel is resolved.
  if (!anyScopeSatisfied(scopes, requiredScopes(typeof name === 'string' ? name : ''))) throw new StreamScopeError();
  if (typeof name !== 'string' || !(STREAM_NAMES as readonly string[]).includes(name)) throw new StreamError(400, 'Unknown stream type');
  if (name === 'user') return { key: `user:${accountId}`, stream: ['user'], context: 'home' };
  if (name === 'user:notification') return { key: `user:notification:${accountId}`, stream: ['user:notification'], context: 'notifications' };
  if (name === 'direct') return { key: `direct:${accountId}`, stream: ['direct'], context: 'thread' };
  if (PUBLIC.has(name)) return { key: name, stream: [name], context: 'public' };
  if (name === 'hashtag' || name === 'hashtag:local') {
    const tag = typeof params.tag === 'string' ? params.tag.replace(/^#/, '') : '';
    if (tag === '') throw new StreamError(400, 'No tag for stream provided');
    return { key: hashtagKey(tag, name === 'hashtag:local'), stream: [name, tag], context: 'public' };
  }
  // list
  const list = typeof params.list === 'string' || typeof params.list === 'number' ? String(params.list) : '';
  if (!/^\d{1,18}$/.test(list)) throw new StreamError(400, 'Missing list name parameter');
  const rows = await services.db.sql.query<{ id: string }>(`select id::text from lists where id = $1 and account_id = $2`, [list, accountId]);
  if (rows.length === 0) throw new StreamError(401, 'Not authorized to stream this list');
  return { key: `list:${list}`, stream: ['list', list], context: 'home' };
}
