/**
 * A light peer: one host on the lab network that behaves on the wire like Mastodon, GoToSocial,
 * Misskey or Pleroma (payload shapes, signing style, inbox answers, retry schedule), answering
 * in-process, with a few accounts and a small memory. Scenario steps drive it through its actions
 * (follow, post, like, boost); assertions read what it knows.
 */
import type { Software } from '../scenario-types.ts';
import type { NetworkHost, PeerContext, WireRequest, WireResponse } from '../network-types.ts';
import { deliver } from './delivery.ts';
import { handleInbox } from './inbox.ts';
import { softwareKey } from './keys.ts';
import { PROFILES, type Mention, type NoteRecord } from './profiles.ts';
import { fetchJson, remoteActor, webfinger } from './remote.ts';
import { RETRY_POLICIES } from './retry.ts';
import { handleGet, notFound } from './serve.ts';
import { SIGNATURE_STYLES } from './signing.ts';
import { idOf, type PeerAccount, type PeerState } from './state.ts';
import type { Json, PeerSoftware, RemoteActor, Visibility } from './types.ts';

export interface LabPeer extends NetworkHost {
  software: Software;
  addAccount(username: string, opts?: { displayName?: string; locked?: boolean; bot?: boolean }): Promise<void>;
  actorUri(username: string): string;
  /** Each builds the activity in the software's shape, signs it in its style and delivers it; resolves after the first tries. */
  follow(username: string, targetActorUri: string): Promise<string>;
  /** Undoes the account's follow of the target (an Undo(Follow) in the software's shape); null when it follows nobody there. */
  unfollow(username: string, targetActorUri: string): Promise<string | null>;
  post(username: string, opts: { text: string; visibility: Visibility; inReplyTo?: string }): Promise<string>;
  like(username: string, objectUri: string): Promise<string>;
  boost(username: string, objectUri: string): Promise<string>;
  /** A Create/Update/Announce of it arrived, it was fetched, or one of this peer's accounts posted it. */
  knows(objectUri: string): boolean;
  /** Remote followers accepted. */
  followerCount(username: string): number;
  /** From the last Create/Update(Question) received. */
  pollTallies(questionUri: string): number[] | null;
  /** Replies to it that arrived here. */
  repliesKnown(objectUri: string): number;
  /** Inbox POSTs accepted (verified). */
  readonly received: number;
  /** Whether a follow this peer's account sent was accepted. */
  isFollowing(username: string, targetActorUri: string): boolean;
  /** Deliveries: answered 2xx, given up, and retries scheduled. */
  readonly deliveries: { delivered: number; failed: number; retries: number };
  /** Resolves when the work started by inbound activities (Accepts sent…) has settled. */
  idle(): Promise<void>;
}

export interface PeerOptions {
  /** The peer's origin; `https://<name>` by default. */
  origin?: string;
  /**
   * How far a signature's Date may be from the lab clock (Mastodon's window: 12 hours back,
   * 1 hour ahead, the default); null accepts any date.
   */
  signatureWindow?: { pastMs: number; futureMs: number } | null;
}

const HOUR = 60 * 60 * 1000;

/** An object's thread as Pleroma (`context`) or Mastodon (`conversation`) names it. */
function threadOf(doc: Json | null): string | null {
  const t = doc ? (doc.context ?? doc.conversation) : null;
  return typeof t === 'string' ? t : null;
}
const MENTION = /@([\w.-]+)@([\w.-]+(?::\d+)?)/g;

export function createPeer(name: string, software: PeerSoftware, ctx: PeerContext, options: PeerOptions = {}): LabPeer {
  const base = (options.origin ?? `https://${name}`).replace(/\/$/, '');
  const host = new URL(base).host;
  const profile = PROFILES[software];
  const key = softwareKey(software);
  const instanceDoc = profile.instanceActor(base, host, key.publicKeyPem);
  const state: PeerState = {
    name,
    base,
    software,
    profile,
    style: SIGNATURE_STYLES[software],
    policy: RETRY_POLICIES[software],
    ctx,
    privateKey: key.privateKey,
    publicKeyPem: key.publicKeyPem,
    instance: { doc: instanceDoc, keyId: (instanceDoc.publicKey as Json).id as string },
    signatureWindow: options.signatureWindow === undefined ? { pastMs: 12 * HOUR, futureMs: HOUR } : options.signatureWindow,
    accounts: new Map(),
    accountsById: new Map(),
    serial: 0,
    notes: new Map(),
    known: new Set(),
    tallies: new Map(),
    replyCounts: new Map(),
    keys: new Map(),
    actors: new Map(),
    follows: new Map(),
    badHosts: new Map(),
    inflight: new Set(),
    stats: { received: 0, delivered: 0, failed: 0, retries: 0 },
  };
  const ids = () => ({ now: ctx.clock.now(), random: ctx.random });

  function account(username: string): PeerAccount {
    const a = state.accounts.get(username);
    if (!a) throw new Error(`${name}: no account ${username}`);
    return a;
  }

  /** The object's document: this peer's own, else fetched (and then known). */
  async function objectDoc(uri: string): Promise<Json | null> {
    try {
      const url = new URL(uri);
      if (url.host === host) {
        const own = state.notes.get(url.pathname);
        if (!own) return null;
        const a = state.accounts.get(own.author)!;
        return profile.note(base, own, a);
      }
    } catch {
      return null;
    }
    const doc = await fetchJson(state, uri);
    if (doc && idOf(doc) === uri) state.known.add(uri);
    return doc;
  }

  async function actorOf(uri: string | null): Promise<RemoteActor | null> {
    if (!uri) return null;
    const own = state.accountsById.get(uri);
    if (own) return { id: own.id, inbox: `${own.id}/inbox`, sharedInbox: null, followers: `${own.id}/followers`, username: own.username };
    return remoteActor(state, uri);
  }

  function followerInboxes(a: PeerAccount): string[] {
    return [...a.followers.values()].map((f) => f.inbox);
  }

  async function handle(req: WireRequest): Promise<WireResponse> {
    try {
      if (req.method === 'GET' || req.method === 'HEAD') {
        const res = handleGet(state, req);
        return req.method === 'HEAD' ? { ...res, body: new Uint8Array(0) } : res;
      }
      if (req.method === 'POST') {
        const path = req.url.pathname;
        const inbox =
          (profile.sharedInbox && path === '/inbox') ||
          path === new URL(state.instance.doc.inbox as string).pathname ||
          (path.endsWith('/inbox') && state.accountsById.has(`${base}${path.slice(0, -'/inbox'.length)}`));
        return inbox ? await handleInbox(state, req) : notFound();
      }
      return { status: 405, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from('{"error":"Method not allowed"}') };
    } catch (e) {
      return { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify({ error: String(e) })) };
    }
  }

  const peer: LabPeer = {
    name,
    software,
    handle,

    async addAccount(username, opts = {}) {
      if (state.accounts.has(username)) throw new Error(`${name}: account ${username} exists`);
      const serial = state.accounts.size + 1;
      const { id, keyId } = profile.accountIds(base, username, serial);
      const a: PeerAccount = {
        username,
        displayName: opts.displayName ?? username,
        locked: opts.locked ?? false,
        bot: opts.bot ?? false,
        id,
        keyId,
        published: ctx.clock.now().toISOString(),
        serial,
        followers: new Map(),
        requests: new Map(),
        notes: 0,
      };
      state.accounts.set(username, a);
      state.accountsById.set(id, a);
    },

    actorUri: (username) => account(username).id,

    async follow(username, target) {
      const a = account(username);
      const remote = await actorOf(target);
      if (!remote) throw new Error(`${name}: cannot resolve ${target}`);
      const activity = profile.follow(base, a, target, ids(), ++state.serial);
      const id = activity.id as string;
      state.follows.set(id, { username, target, accepted: false, activity });
      await deliver(state, a, activity, [remote.inbox]);
      return id;
    },

    async unfollow(username, target) {
      const a = account(username);
      const entry = [...state.follows].find(([, f]) => f.username === username && f.target === target);
      if (!entry) return null;
      state.follows.delete(entry[0]);
      const remote = await actorOf(target);
      const undo = profile.undo(base, a, entry[1].activity, ids());
      await deliver(state, a, undo, remote ? [remote.inbox] : []);
      return undo.id as string;
    },

    async post(username, { text, visibility, inReplyTo }) {
      const a = account(username);
      const mentions: Mention[] = [];
      const inboxes: string[] = [];
      const mention = async (actorId: string, acct: string) => {
        if (mentions.some((m) => m.href === actorId)) return;
        mentions.push({ href: actorId, name: `@${acct}` });
        const remote = await actorOf(actorId);
        if (remote && !state.accountsById.has(actorId)) inboxes.push(visibility === 'direct' ? remote.inbox : (remote.sharedInbox ?? remote.inbox));
      };
      for (const m of text.matchAll(MENTION)) {
        const acct = `${m[1]}@${m[2]}`;
        const local = m[2]!.toLowerCase() === host.toLowerCase() ? state.accounts.get(m[1]!) : undefined;
        const actorId = local ? local.id : await webfinger(state, acct);
        if (actorId) await mention(actorId, acct);
      }
      let thread: string | null = null;
      if (inReplyTo) {
        const parent = await objectDoc(inReplyTo);
        const author = idOf(parent?.attributedTo);
        thread = threadOf(parent);
        if (author && !mentions.some((m) => m.href === author)) {
          const remote = await actorOf(author);
          if (remote) await mention(author, `${remote.username ?? 'unknown'}@${new URL(author).host}`);
        }
      }
      const newIds = profile.newNote(base, a, ids());
      const { to, cc } = profile.address(a, visibility, mentions.map((m) => m.href));
      const note: NoteRecord = {
        ...newIds,
        author: username,
        text,
        visibility,
        inReplyTo: inReplyTo ?? null,
        published: ctx.clock.now().toISOString(),
        to,
        cc,
        mentions,
        thread: thread ?? profile.newThread(base, host, ids()),
        likes: 0,
        shares: 0,
        replies: null,
      };
      state.notes.set(new URL(note.id).pathname, note);
      a.notes++;
      const targets = visibility === 'direct' ? inboxes : [...followerInboxes(a), ...inboxes];
      await deliver(state, a, profile.create(base, note, a), targets);
      return note.id;
    },

    async like(username, objectUri) {
      const a = account(username);
      const doc = await objectDoc(objectUri);
      const author = idOf(doc?.attributedTo);
      const remote = await actorOf(author);
      const activity = profile.like(base, a, objectUri, author, ids(), ++state.serial, threadOf(doc));
      await deliver(state, a, activity, remote ? [remote.inbox] : []);
      return activity.id as string;
    },

    async boost(username, objectUri) {
      const a = account(username);
      const doc = await objectDoc(objectUri);
      const author = idOf(doc?.attributedTo);
      const remote = await actorOf(author);
      const activity = profile.announce(base, a, objectUri, author, ids(), threadOf(doc));
      state.known.add(objectUri);
      await deliver(state, a, activity, [...followerInboxes(a), ...(remote ? [remote.sharedInbox ?? remote.inbox] : [])]);
      return activity.id as string;
    },

    knows(uri) {
      if (state.known.has(uri)) return true;
      try {
        const url = new URL(uri);
        return url.host === host && state.notes.has(url.pathname);
      } catch {
        return false;
      }
    },
    followerCount: (username) => state.accounts.get(username)?.followers.size ?? 0,
    pollTallies: (uri) => state.tallies.get(uri)?.slice() ?? null,
    repliesKnown: (uri) => state.replyCounts.get(uri) ?? 0,
    get received() {
      return state.stats.received;
    },
    isFollowing(username, target) {
      for (const f of state.follows.values()) if (f.username === username && f.target === target && f.accepted) return true;
      return false;
    },
    get deliveries() {
      const { delivered, failed, retries } = state.stats;
      return { delivered, failed, retries };
    },
    async idle() {
      while (state.inflight.size > 0) await Promise.all([...state.inflight]);
    },
  };
  return peer;
}
