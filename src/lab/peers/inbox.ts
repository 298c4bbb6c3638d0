/**
 * A peer's inbox (personal and shared): every POST's HTTP signature is verified (the sender's key
 * fetched through the lab network and cached; a key that fails is fetched once more, as after a
 * key rotation), then the activity is applied to the peer's small state and the software's answer
 * given. Anything unverifiable is 401.
 *
 * An activity whose actor is not the signer (a forwarded reply) is not trusted as sent: its
 * object is fetched from its origin instead, as Mastodon does without a linked-data signature.
 */
import type { WireRequest, WireResponse } from '../network-types.ts';
import { deliver } from './delivery.ts';
import { fetchJson, keyFor, remoteActor } from './remote.ts';
import { parseSignatureHeader, precheck, verifyWithKey } from './signing.ts';
import { background, idOf, type PeerState } from './state.ts';
import type { Json } from './types.ts';

const NO_BODY = new Uint8Array(0);

function text(status: number, body: string, contentType: string | null = 'application/json; charset=utf-8'): WireResponse {
  return { status, headers: contentType ? { 'content-type': contentType } : {}, body: Buffer.from(body) };
}

export async function handleInbox(state: PeerState, req: WireRequest): Promise<WireResponse> {
  const sig = parseSignatureHeader(req.headers.signature);
  const problem = precheck(sig, req, state.ctx.clock.now(), state.signatureWindow);
  if (problem || !sig) return text(401, JSON.stringify({ error: `signature: ${problem}` }));
  let signer = await keyFor(state, sig.keyId, false);
  let ok = signer !== null && (await verifyWithKey(sig, signer.key, req.method, req.url, req.headers));
  if (!ok) {
    signer = await keyFor(state, sig.keyId, true);
    ok = signer !== null && (await verifyWithKey(sig, signer.key, req.method, req.url, req.headers));
  }
  if (!ok || !signer) return text(401, JSON.stringify({ error: 'signature: not verified' }));
  let activity: unknown;
  try {
    activity = JSON.parse(Buffer.from(req.body ?? NO_BODY).toString('utf8'));
  } catch {
    return text(400, JSON.stringify({ error: 'not JSON' }));
  }
  if (!activity || typeof activity !== 'object' || Array.isArray(activity)) return text(400, JSON.stringify({ error: 'not an activity' }));
  state.stats.received++;
  await apply(state, activity as Json, signer.owner);
  const answer = state.profile.inboxAnswer;
  return text(answer.status, answer.body, answer.contentType);
}

function typeOf(o: Json): string {
  return typeof o.type === 'string' ? o.type : Array.isArray(o.type) && typeof o.type[0] === 'string' ? o.type[0] : '';
}

async function apply(state: PeerState, act: Json, signer: string): Promise<void> {
  const type = typeOf(act);
  const actor = idOf(act.actor);
  if (actor !== signer) return forwarded(state, act);
  switch (type) {
    case 'Follow':
      return onFollow(state, act, actor);
    case 'Accept':
    case 'Reject':
      return onAnswer(state, act, type === 'Accept');
    case 'Undo':
      return onUndo(state, act, actor);
    case 'Create':
    case 'Update':
      if (act.object && typeof act.object === 'object') return void onObject(state, act.object as Json);
      if (typeof act.object === 'string') {
        const doc = await fetchJson(state, act.object);
        if (doc) onObject(state, doc);
      }
      return;
    case 'Delete': {
      const id = idOf(act.object);
      if (id) {
        state.known.delete(id);
        state.tallies.delete(id);
      }
      return;
    }
    case 'Announce': {
      const id = idOf(act.object);
      if (!id) return;
      state.known.add(id);
      const own = ownNote(state, id);
      if (own) own.shares++;
      return;
    }
    case 'Like':
    case 'EmojiReact': {
      const own = ownNote(state, idOf(act.object));
      if (own) own.likes++;
      return;
    }
  }
}

function ownNote(state: PeerState, id: string | null) {
  if (!id) return undefined;
  try {
    const url = new URL(id);
    return url.host === new URL(state.base).host ? state.notes.get(url.pathname) : undefined;
  } catch {
    return undefined;
  }
}

/** At most this many reply ids are kept per own note (the `replies` collection's items). */
const MAX_REPLIES_LISTED = 200;

function onObject(state: PeerState, o: Json): void {
  const id = idOf(o);
  if (!id) return;
  const fresh = !state.known.has(id);
  state.known.add(id);
  const parent = idOf(o.inReplyTo);
  if (fresh && parent) {
    state.replyCounts.set(parent, (state.replyCounts.get(parent) ?? 0) + 1);
    const own = ownNote(state, parent);
    if (own) {
      own.replies ??= [];
      if (own.replies.length < MAX_REPLIES_LISTED) own.replies.push(id);
    }
  }
  if (typeOf(o) === 'Question') {
    const options = Array.isArray(o.oneOf) ? o.oneOf : Array.isArray(o.anyOf) ? o.anyOf : [];
    state.tallies.set(
      id,
      (options as Json[]).map((opt) => {
        const n = (opt?.replies as Json | undefined)?.totalItems;
        return typeof n === 'number' && Number.isFinite(n) ? n : 0;
      }),
    );
  }
}

async function forwarded(state: PeerState, act: Json): Promise<void> {
  const type = typeOf(act);
  if (type !== 'Create' && type !== 'Update') return;
  const id = idOf(act.object);
  if (!id) return;
  const doc = await fetchJson(state, id);
  // Only what the object's own server serves under its id counts.
  if (doc && idOf(doc) === id) onObject(state, doc);
}

async function onFollow(state: PeerState, act: Json, actor: string): Promise<void> {
  const account = state.accountsById.get(idOf(act.object) ?? '');
  const followId = idOf(act);
  if (!account || !followId) return;
  if (account.locked) {
    account.requests.set(actor, followId);
    return;
  }
  const remote = await remoteActor(state, actor);
  if (!remote) return;
  account.followers.set(actor, { inbox: remote.sharedInbox ?? remote.inbox, followId });
  const accept = state.profile.accept(state.base, account, { id: followId, actor }, { now: state.ctx.clock.now(), random: state.ctx.random }, ++state.serial);
  // The answer does not wait for the Accept's delivery, as no server's inbox does.
  background(state, deliver(state, account, accept, [remote.inbox]));
}

function onAnswer(state: PeerState, act: Json, accepted: boolean): void {
  const object = act.object;
  let followId = idOf(object);
  if (!followId || !state.follows.has(followId)) {
    // Some answers name the Follow by its actor and object only.
    const o = object && typeof object === 'object' ? (object as Json) : null;
    const by = idOf(o?.actor);
    const target = idOf(act.actor);
    followId = [...state.follows].find(([, f]) => f.target === target && state.accounts.get(f.username)?.id === by)?.[0] ?? null;
  }
  if (!followId) return;
  const follow = state.follows.get(followId);
  if (!follow || follow.target !== idOf(act.actor)) return;
  if (accepted) follow.accepted = true;
  else state.follows.delete(followId);
}

function onUndo(state: PeerState, act: Json, actor: string): void {
  const object = act.object && typeof act.object === 'object' && !Array.isArray(act.object) ? (act.object as Json) : null;
  const undone = object ? typeOf(object) : '';
  const objectId = idOf(act.object);
  if (undone === 'Follow' || !object) {
    const target = object ? idOf(object.object) : null;
    for (const account of state.accounts.values()) {
      if (target && account.id !== target) continue;
      const f = account.followers.get(actor);
      if (f && (!objectId || f.followId === objectId || target)) account.followers.delete(actor);
      account.requests.delete(actor);
    }
  }
}
