/**
 * What a peer answers to GET (and HEAD), in its software's shape: WebFinger, host-meta, NodeInfo,
 * actors (and GoToSocial's key documents), the instance actor, notes, minimal collections, and
 * Pleroma's litepub context. Documents are built on each request, never kept.
 */
import type { WireRequest, WireResponse } from '../network-types.ts';
import { LITEPUB_CONTEXT, LITEPUB_PATH, type NoteRecord } from './profiles.ts';
import type { PeerAccount, PeerState } from './state.ts';
import type { Json } from './types.ts';

const AP = 'application/activity+json; charset=utf-8';

function json(status: number, doc: unknown, contentType = AP): WireResponse {
  return { status, headers: { 'content-type': contentType }, body: Buffer.from(JSON.stringify(doc)) };
}

export function notFound(): WireResponse {
  return json(404, { error: 'Record not found' }, 'application/json; charset=utf-8');
}

function collection(id: string, totalItems: number, ordered = true): Json {
  return { '@context': 'https://www.w3.org/ns/activitystreams', id, type: ordered ? 'OrderedCollection' : 'Collection', totalItems };
}

/** The account a path of its belongs to, and what the path names. */
function accountPath(state: PeerState, path: string): { account: PeerAccount; rest: string } | null {
  // Actor paths are `/users/<username or id>`; what follows names the document.
  const m = /^(\/users\/[^/]+)(\/.*)?$/.exec(path);
  if (!m) return null;
  const account = state.accountsById.get(`${state.base}${m[1]}`);
  return account ? { account, rest: m[2] ?? '' } : null;
}

export function noteDocument(state: PeerState, n: NoteRecord): Json | null {
  const account = state.accounts.get(n.author);
  if (!account) return null;
  const create = state.profile.create(state.base, n, account);
  return { '@context': create['@context'], ...(create.object as Json) };
}

export function handleGet(state: PeerState, req: WireRequest): WireResponse {
  const { profile, base } = state;
  const host = new URL(base).host;
  const path = req.url.pathname;
  if (path === '/.well-known/webfinger') {
    const resource = req.url.searchParams.get('resource');
    if (!resource) return json(400, { error: 'resource is required' }, 'application/json; charset=utf-8');
    const m = /^(?:acct:)?@?([^@]+)@(.+)$/.exec(resource);
    const account = m ? (m[2]!.toLowerCase() === host.toLowerCase() ? state.accounts.get(m[1]!) : undefined) : state.accountsById.get(resource);
    if (!account) return notFound();
    return json(200, profile.webfinger(base, host, account), 'application/jrd+json; charset=utf-8');
  }
  if (path === '/.well-known/host-meta') {
    const xrd = `<?xml version="1.0" encoding="UTF-8"?>\n<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n  <Link rel="lrdd" template="${base}/.well-known/webfinger?resource={uri}"/>\n</XRD>\n`;
    return { status: 200, headers: { 'content-type': 'application/xrd+xml; charset=utf-8' }, body: Buffer.from(xrd) };
  }
  if (path === '/.well-known/nodeinfo') {
    return json(200, { links: [{ rel: `http://nodeinfo.diaspora.software/ns/schema/${profile.nodeinfo.schema}`, href: `${base}${profile.nodeinfo.path}` }] }, 'application/json; charset=utf-8');
  }
  if (path === profile.nodeinfo.path) {
    let posts = 0;
    for (const a of state.accounts.values()) posts += a.notes;
    const users = state.accounts.size;
    return json(
      200,
      {
        version: profile.nodeinfo.schema,
        software: { name: profile.nodeinfo.name, version: profile.nodeinfo.version },
        protocols: ['activitypub'],
        services: { inbound: [], outbound: [] },
        openRegistrations: false,
        usage: { users: { total: users, activeMonth: users, activeHalfyear: users }, localPosts: posts },
        metadata: {},
      },
      `application/json; profile="http://nodeinfo.diaspora.software/ns/schema/${profile.nodeinfo.schema}#"`,
    );
  }
  if (profile.software === 'pleroma' && path === LITEPUB_PATH) return json(200, LITEPUB_CONTEXT, 'application/ld+json; charset=utf-8');
  const instanceId = state.instance.doc.id as string;
  if (path === new URL(instanceId).pathname) return json(200, state.instance.doc);
  if (path === new URL(state.instance.keyId).pathname && !new URL(state.instance.keyId).hash) return json(200, state.instance.doc);

  const note = state.notes.get(path);
  if (note) {
    // Followers-only and direct notes are not served to an unsigned fetch; light peers do not
    // check who asks, so they are not served at all.
    if (note.visibility === 'private' || note.visibility === 'direct') return notFound();
    const doc = noteDocument(state, note);
    return doc ? json(200, doc) : notFound();
  }
  const replies = /^(.*)\/replies$/.exec(path);
  const repliedTo = replies ? state.notes.get(replies[1]!) : undefined;
  if (repliedTo && (repliedTo.visibility === 'public' || repliedTo.visibility === 'unlisted')) {
    const items = repliedTo.replies ?? [];
    const id = `${repliedTo.id}/replies`;
    return json(200, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id,
      type: 'Collection',
      totalItems: items.length,
      first: { type: 'CollectionPage', id: `${id}?page=true`, partOf: id, items },
    });
  }

  const owned = accountPath(state, path);
  if (!owned) return notFound();
  const { account, rest } = owned;
  switch (rest) {
    case '':
      return json(200, profile.actor(base, account, state.publicKeyPem));
    case '/main-key': {
      const doc = profile.keyDocument(base, account, state.publicKeyPem);
      return doc ? json(200, doc) : notFound();
    }
    case '/outbox':
      return json(200, collection(`${account.id}/outbox`, account.notes));
    case '/followers':
      return json(200, collection(`${account.id}/followers`, account.followers.size));
    case '/following': {
      let n = 0;
      for (const f of state.follows.values()) if (f.username === account.username && f.accepted) n++;
      return json(200, collection(`${account.id}/following`, n));
    }
    case '/collections/featured':
      return json(200, { ...collection(`${account.id}/collections/featured`, 0), orderedItems: [] });
    default:
      return notFound();
  }
}
