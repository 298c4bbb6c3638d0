/**
 * Before Fedify: a Delete whose actor this server does not know (never seen, or already deleted)
 * is answered 202 and dropped, without verifying its signature. Verifying would mean fetching the
 * actor's key from its server, which for an account that is gone answers 410 or nothing, once per
 * Delete: a server deleting thousands of accounts would make Roost fetch thousands of keys for
 * accounts it never had. Mastodon does the same (InboxesController skips a Delete from an unknown
 * actor). Nothing is written, so believing the sender costs nothing. Runs after guardInbox
 * (signed, bounded, JSON).
 */
import { inboxBodyJson } from '../inbox-guard.ts';
import type { Services } from '../../context.ts';

const INBOX_PATH = /^\/(?:users\/[^/]+\/)?inbox$/;

function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  const id = (v as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : null;
}

export function unknownActorDeleteGate(services: Services): (request: Request) => Promise<Response | null> {
  return async (request) => {
    if (request.method !== 'POST' || !INBOX_PATH.test(new URL(request.url).pathname)) return null;
    // Read and parsed once for all the gates (../inbox-guard.ts).
    const json = (await inboxBodyJson(request)) as Record<string, unknown> | null;
    if (!json || typeof json !== 'object' || json.type !== 'Delete') return null;
    const actor = idOf(Array.isArray(json.actor) ? json.actor[0] : json.actor);
    if (!actor || !URL.canParse(actor)) return null;
    const known = await services.db.sql.query(`select 1 from accounts where uri = $1 and domain is not null limit 1`, [actor]);
    return known.length > 0 ? null : new Response(null, { status: 202 });
  };
}
