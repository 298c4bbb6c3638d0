/**
 * Reading other servers through the lab network: signed GETs (as this peer's instance actor, in
 * its software's signing style), WebFinger, actors and their keys, each cached in the peer.
 */
import type { KeyObject } from 'node:crypto';
import { publicKeyFromPem } from './keys.ts';
import { signHeaders } from './signing.ts';
import { idOf, remember, type PeerState } from './state.ts';
import type { Json, RemoteActor } from './types.ts';

export async function fetchJson(state: PeerState, href: string): Promise<Json | null> {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  url.hash = '';
  const headers = await signHeaders(state.style, { keyId: state.instance.keyId, privateKey: state.privateKey }, 'GET', url, state.ctx.clock.now(), null);
  let res;
  try {
    res = await state.ctx.send({ method: 'GET', url, headers, body: null });
  } catch {
    return null;
  }
  if (res.status !== 200) return null;
  try {
    const doc = JSON.parse(Buffer.from(res.body).toString('utf8')) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Json) : null;
  } catch {
    return null;
  }
}

function actorFromDoc(doc: Json): RemoteActor | null {
  const id = idOf(doc);
  const inbox = typeof doc.inbox === 'string' ? doc.inbox : null;
  if (!id || !inbox) return null;
  const endpoints = doc.endpoints && typeof doc.endpoints === 'object' ? (doc.endpoints as Json) : null;
  const shared = typeof endpoints?.sharedInbox === 'string' ? endpoints.sharedInbox : typeof doc.sharedInbox === 'string' ? doc.sharedInbox : null;
  return {
    id,
    inbox,
    sharedInbox: shared,
    followers: typeof doc.followers === 'string' ? doc.followers : null,
    username: typeof doc.preferredUsername === 'string' ? doc.preferredUsername : null,
  };
}

export async function remoteActor(state: PeerState, uri: string): Promise<RemoteActor | null> {
  const hit = state.actors.get(uri);
  if (hit) return hit;
  const doc = await fetchJson(state, uri);
  const actor = doc ? actorFromDoc(doc) : null;
  if (!actor || actor.id !== uri) return null;
  remember(state.actors, uri, actor);
  return actor;
}

/** The key `keyId` names and the actor that owns it, fetched (and cached) unless already known. */
export async function keyFor(state: PeerState, keyId: string, refresh: boolean): Promise<{ key: KeyObject; owner: string } | null> {
  if (!refresh) {
    const hit = state.keys.get(keyId);
    if (hit) return hit;
  }
  const doc = await fetchJson(state, keyId);
  if (!doc) return null;
  const entries = Array.isArray(doc.publicKey) ? doc.publicKey : doc.publicKey ? [doc.publicKey] : doc.publicKeyPem ? [doc] : [];
  const entry = (entries as Json[]).find((e) => e && typeof e === 'object' && e.id === keyId);
  if (!entry || typeof entry.publicKeyPem !== 'string') return null;
  const key = publicKeyFromPem(entry.publicKeyPem);
  const owner = idOf(entry.owner) ?? idOf(doc);
  if (!key || !owner) return null;
  // The key's document is usually its actor: remember where to deliver to it.
  if (idOf(doc) === owner) {
    const actor = actorFromDoc(doc);
    if (actor) remember(state.actors, owner, actor);
  }
  const found = { key, owner };
  remember(state.keys, keyId, found);
  return found;
}

/** `user@host` → actor URI, through the host's WebFinger (unsigned, as every server asks it). */
export async function webfinger(state: PeerState, acct: string): Promise<string | null> {
  const host = acct.slice(acct.lastIndexOf('@') + 1);
  const url = new URL(`${new URL(state.base).protocol}//${host}/.well-known/webfinger`);
  url.searchParams.set('resource', `acct:${acct}`);
  let res;
  try {
    res = await state.ctx.send({ method: 'GET', url, headers: { host: url.host, accept: 'application/jrd+json, application/json' }, body: null });
  } catch {
    return null;
  }
  if (res.status !== 200) return null;
  try {
    const jrd = JSON.parse(Buffer.from(res.body).toString('utf8')) as { links?: { rel?: string; type?: string; href?: string }[] };
    const self = jrd.links?.find((l) => l.rel === 'self' && typeof l.href === 'string' && (l.type === 'application/activity+json' || l.type?.startsWith('application/ld+json')));
    return self?.href ?? null;
  } catch {
    return null;
  }
}
