/**
 * The four softwares' shapes on the wire: actor documents, WebFinger, NodeInfo, notes and the
 * activities a light peer sends, each modelled on the payloads in
 * test/fixtures/activitypub/<software>/ (the JSON-LD contexts, the id patterns, the properties each
 * adds: Mastodon's atomUri/conversation and its replies/likes/shares collections, GoToSocial's
 * interactionPolicy and `…/main-key` keyIds, Misskey's `_misskey_content`/`source` and opaque
 * actor ids, Pleroma's litepub context, `context`, `directMessage` and empty `bto`/`bcc`).
 * Attachments, emojis and quotes are left out: a light peer posts text.
 */
import { aid, shortHash, snowflake, ulid, uuid } from './ids.ts';
import { AS_TYPE } from './signing.ts';
import type { Json, PeerSoftware, Visibility } from './types.ts';

export const AS = 'https://www.w3.org/ns/activitystreams';
export const SECURITY = 'https://w3id.org/security/v1';
export const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

/** One of a peer's accounts, as much as the shapes need. */
export interface Account {
  username: string;
  displayName: string;
  locked: boolean;
  bot: boolean;
  /** The actor URI. */
  id: string;
  keyId: string;
  published: string;
}

export interface Mention {
  href: string;
  /** `@user@host` */
  name: string;
}

/** A note one of the peer's accounts posted: what is needed to render it again when fetched. */
export interface NoteRecord {
  id: string;
  activityId: string;
  url: string;
  author: string;
  text: string;
  visibility: Visibility;
  inReplyTo: string | null;
  published: string;
  to: string[];
  cc: string[];
  mentions: Mention[];
  /** Mastodon's `conversation`, Pleroma's `context` (inherited from the parent when known). */
  thread: string | null;
  likes: number;
  shares: number;
  /** Replies that arrived here, for the `replies` collection. */
  replies: string[] | null;
}

export interface NewIds {
  random: () => number;
  now: Date;
}

export interface Profile {
  software: PeerSoftware;
  nodeinfo: { name: string; version: string; path: string; schema: '2.0' | '2.1' };
  /** Whether its actors advertise a shared inbox (GoToSocial's do not). */
  sharedInbox: boolean;
  /** How its inbox answers an accepted POST. */
  inboxAnswer: { status: number; body: string; contentType: string | null };
  /** The actor id and keyId of a new account (`serial` numbers the peer's accounts, for Misskey's ids). */
  accountIds(base: string, username: string, serial: number): { id: string; keyId: string };
  actor(base: string, a: Account, pem: string): Json;
  /** The document served at a keyId that is a path of its own (GoToSocial's `…/main-key`), else null. */
  keyDocument(base: string, a: Account, pem: string): Json | null;
  instanceActor(base: string, host: string, pem: string): Json;
  webfinger(base: string, host: string, a: Account): Json;
  profileUrl(base: string, a: Account): string;
  newNote(base: string, a: Account, ids: NewIds): { id: string; activityId: string; url: string };
  address(a: Account, visibility: Visibility, mentions: string[]): { to: string[]; cc: string[] };
  /** A new thread's `conversation` / `context`, or null when the software sends none. */
  newThread(base: string, host: string, ids: NewIds): string | null;
  note(base: string, n: NoteRecord, a: Account): Json;
  create(base: string, n: NoteRecord, a: Account): Json;
  follow(base: string, a: Account, target: string, ids: NewIds, serial: number): Json;
  accept(base: string, a: Account, follow: { id: string; actor: string }, ids: NewIds, serial: number): Json;
  undo(base: string, a: Account, activity: Json, ids: NewIds): Json;
  /** `thread` is the object's own `context` / `conversation`, when it has one (Pleroma repeats it). */
  like(base: string, a: Account, object: string, objectAuthor: string | null, ids: NewIds, serial: number, thread: string | null): Json;
  announce(base: string, a: Account, object: string, objectAuthor: string | null, ids: NewIds, thread: string | null): Json;
}

// --- content ---------------------------------------------------------------------------------

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const MENTION = /@([\w.-]+)@([\w.-]+(?::\d+)?)/g;

/** `text` as HTML, each known `@user@host` rendered by `mention`, the rest escaped. */
function renderText(text: string, mentions: Mention[], mention: (m: Mention, user: string) => string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(MENTION)) {
    const known = mentions.find((x) => x.name.toLowerCase() === m[0].toLowerCase());
    if (!known) continue;
    out += escapeHtml(text.slice(last, m.index)) + mention(known, m[1]!);
    last = m.index! + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}

/** Mention tags, as all four send them. */
function mentionTags(n: NoteRecord): Json[] {
  return n.mentions.map((m) => ({ type: 'Mention', href: m.href, name: m.name }));
}

// --- Mastodon --------------------------------------------------------------------------------

const MASTODON_ACTOR_CONTEXT = [
  AS,
  SECURITY,
  {
    manuallyApprovesFollowers: 'as:manuallyApprovesFollowers',
    toot: 'http://joinmastodon.org/ns#',
    featured: { '@id': 'toot:featured', '@type': '@id' },
    featuredTags: { '@id': 'toot:featuredTags', '@type': '@id' },
    alsoKnownAs: { '@id': 'as:alsoKnownAs', '@type': '@id' },
    movedTo: { '@id': 'as:movedTo', '@type': '@id' },
    schema: 'http://schema.org#',
    PropertyValue: 'schema:PropertyValue',
    value: 'schema:value',
    discoverable: 'toot:discoverable',
    suspended: 'toot:suspended',
    memorial: 'toot:memorial',
    indexable: 'toot:indexable',
    attributionDomains: { '@id': 'toot:attributionDomains', '@type': '@id' },
  },
];

const MASTODON_NOTE_CONTEXT = [
  AS,
  {
    ostatus: 'http://ostatus.org#',
    atomUri: 'ostatus:atomUri',
    inReplyToAtomUri: 'ostatus:inReplyToAtomUri',
    conversation: 'ostatus:conversation',
    sensitive: 'as:sensitive',
    toot: 'http://joinmastodon.org/ns#',
    votersCount: 'toot:votersCount',
    Hashtag: 'as:Hashtag',
    gts: 'https://gotosocial.org/ns#',
    interactionPolicy: { '@id': 'gts:interactionPolicy', '@type': '@id' },
    canQuote: { '@id': 'gts:canQuote', '@type': '@id' },
    automaticApproval: { '@id': 'gts:automaticApproval', '@type': '@id' },
    manualApproval: { '@id': 'gts:manualApproval', '@type': '@id' },
  },
];

/** Mastodon's, Misskey's and Pleroma's addressing: the mentioned go in `cc` but for a direct post. */
function ccMentions(a: Account, visibility: Visibility, mentions: string[]): { to: string[]; cc: string[] } {
  const followers = `${a.id}/followers`;
  switch (visibility) {
    case 'public':
      return { to: [PUBLIC], cc: [followers, ...mentions] };
    case 'unlisted':
      return { to: [followers], cc: [PUBLIC, ...mentions] };
    case 'private':
      return { to: [followers], cc: mentions };
    case 'direct':
      return { to: mentions, cc: [] };
  }
}

/** GoToSocial's and Pleroma's: the mentioned go in `to`. */
function toMentions(a: Account, visibility: Visibility, mentions: string[]): { to: string[]; cc: string[] } {
  const followers = `${a.id}/followers`;
  switch (visibility) {
    case 'public':
      return { to: [PUBLIC, ...mentions], cc: [followers] };
    case 'unlisted':
      return { to: [followers, ...mentions], cc: [PUBLIC] };
    case 'private':
      return { to: [followers, ...mentions], cc: [] };
    case 'direct':
      return { to: mentions, cc: [] };
  }
}

function webfingerSubject(host: string, a: Account): string {
  return `acct:${a.username}@${host}`;
}

const PROFILE_PAGE = 'http://webfinger.net/rel/profile-page';
const SUBSCRIBE = 'http://ostatus.org/schema/1.0/subscribe';

const mastodon: Profile = {
  software: 'mastodon',
  nodeinfo: { name: 'mastodon', version: '4.3.2', path: '/nodeinfo/2.0', schema: '2.0' },
  sharedInbox: true,
  inboxAnswer: { status: 202, body: '', contentType: null },
  accountIds: (base, username) => ({ id: `${base}/users/${username}`, keyId: `${base}/users/${username}#main-key` }),
  actor: (base, a, pem) => ({
    '@context': MASTODON_ACTOR_CONTEXT,
    id: a.id,
    type: a.bot ? 'Service' : 'Person',
    following: `${a.id}/following`,
    followers: `${a.id}/followers`,
    inbox: `${a.id}/inbox`,
    outbox: `${a.id}/outbox`,
    featured: `${a.id}/collections/featured`,
    featuredTags: `${a.id}/collections/tags`,
    preferredUsername: a.username,
    name: a.displayName,
    summary: '',
    url: `${base}/@${a.username}`,
    manuallyApprovesFollowers: a.locked,
    discoverable: true,
    indexable: true,
    published: a.published,
    memorial: false,
    attributionDomains: [new URL(base).host],
    devices: `${a.id}/collections/devices`,
    publicKey: { id: a.keyId, owner: a.id, publicKeyPem: pem },
    tag: [],
    attachment: [],
    endpoints: { sharedInbox: `${base}/inbox` },
  }),
  keyDocument: () => null,
  instanceActor: (base, host, pem) => ({
    '@context': MASTODON_ACTOR_CONTEXT,
    id: `${base}/actor`,
    type: 'Application',
    inbox: `${base}/actor/inbox`,
    outbox: `${base}/actor/outbox`,
    preferredUsername: host,
    url: `${base}/about/more?instance_actor=true`,
    manuallyApprovesFollowers: true,
    publicKey: { id: `${base}/actor#main-key`, owner: `${base}/actor`, publicKeyPem: pem },
    endpoints: { sharedInbox: `${base}/inbox` },
  }),
  webfinger: (base, host, a) => ({
    subject: webfingerSubject(host, a),
    aliases: [`${base}/@${a.username}`, a.id],
    links: [
      { rel: PROFILE_PAGE, type: 'text/html', href: `${base}/@${a.username}` },
      { rel: 'self', type: AS_TYPE, href: a.id },
      { rel: SUBSCRIBE, template: `${base}/authorize_interaction?uri={uri}` },
    ],
  }),
  profileUrl: (base, a) => `${base}/@${a.username}`,
  newNote(base, a, { now, random }) {
    const sid = snowflake(now.getTime(), random);
    const id = `${a.id}/statuses/${sid}`;
    return { id, activityId: `${id}/activity`, url: `${base}/@${a.username}/${sid}` };
  },
  address: ccMentions,
  newThread: (_base, host, { now, random }) => `tag:${host},${now.toISOString().slice(0, 10)}:objectId=${Math.floor(random() * 1e9)}:objectType=Conversation`,
  note: (_base, n, a) => {
    const html = `<p>${renderText(n.text, n.mentions, (m, user) => `<span class="h-card" translate="no"><a href="${escapeHtml(m.href)}" class="u-url mention">@<span>${escapeHtml(user)}</span></a></span>`)}</p>`;
    return {
      id: n.id,
      type: 'Note',
      summary: null,
      inReplyTo: n.inReplyTo,
      published: n.published,
      url: n.url,
      attributedTo: a.id,
      to: n.to,
      cc: n.cc,
      sensitive: false,
      atomUri: n.id,
      inReplyToAtomUri: n.inReplyTo,
      conversation: n.thread,
      content: html,
      contentMap: { en: html },
      attachment: [],
      tag: mentionTags(n),
      replies: {
        id: `${n.id}/replies`,
        type: 'Collection',
        first: { type: 'CollectionPage', next: `${n.id}/replies?only_other_accounts=true&page=true`, partOf: `${n.id}/replies`, items: [] },
      },
      likes: { id: `${n.id}/likes`, type: 'Collection', totalItems: n.likes },
      shares: { id: `${n.id}/shares`, type: 'Collection', totalItems: n.shares },
      interactionPolicy: { canQuote: { automaticApproval: n.visibility === 'public' || n.visibility === 'unlisted' ? [PUBLIC] : [] } },
    };
  },
  create(base, n, a) {
    return { '@context': MASTODON_NOTE_CONTEXT, id: n.activityId, type: 'Create', actor: a.id, published: n.published, to: n.to, cc: n.cc, object: withoutContext(this.note(base, n, a)) };
  },
  follow: (base, a, target, { random }) => ({ '@context': AS, id: `${base}/${uuid(random)}`, type: 'Follow', actor: a.id, object: target }),
  accept: (_base, a, follow, _ids, serial) => ({
    '@context': AS,
    id: `${a.id}#accepts/follows/${serial}`,
    type: 'Accept',
    actor: a.id,
    object: { id: follow.id, type: 'Follow', actor: follow.actor, object: a.id },
  }),
  undo: (_base, a, activity) => ({ '@context': AS, id: `${String(activity.id)}/undo`, type: 'Undo', actor: a.id, object: withoutContext(activity) }),
  like: (_base, a, object, _author, _ids, serial) => ({ '@context': AS, id: `${a.id}#likes/${serial}`, type: 'Like', actor: a.id, object }),
  announce(_base, a, object, author, { now, random }) {
    const id = `${a.id}/statuses/${snowflake(now.getTime(), random)}/activity`;
    return { '@context': AS, id, type: 'Announce', actor: a.id, published: now.toISOString(), to: [PUBLIC], cc: [...(author ? [author] : []), `${a.id}/followers`], object };
  },
};

// --- GoToSocial ------------------------------------------------------------------------------

const GTS_ACTOR_CONTEXT = [
  SECURITY,
  AS,
  {
    discoverable: 'toot:discoverable',
    featured: { '@id': 'toot:featured', '@type': '@id' },
    indexable: 'toot:indexable',
    manuallyApprovesFollowers: 'as:manuallyApprovesFollowers',
    alsoKnownAs: { '@id': 'as:alsoKnownAs', '@type': '@id' },
    movedTo: { '@id': 'as:movedTo', '@type': '@id' },
    toot: 'http://joinmastodon.org/ns#',
    schema: 'http://schema.org#',
    PropertyValue: 'schema:PropertyValue',
    value: 'schema:value',
  },
];

const GTS_NOTE_CONTEXT = [
  'https://gotosocial.org/ns',
  AS,
  { Hashtag: 'as:Hashtag', sensitive: 'as:sensitive', toot: 'http://joinmastodon.org/ns#', votersCount: 'toot:votersCount' },
];

function gtsPolicy(n: NoteRecord, a: Account): Json {
  const everyone = n.visibility === 'public' || n.visibility === 'unlisted' ? [PUBLIC] : [`${a.id}/followers`];
  return {
    canLike: { automaticApproval: everyone, manualApproval: [] },
    canReply: { automaticApproval: everyone, manualApproval: [] },
    canAnnounce: { automaticApproval: n.visibility === 'public' || n.visibility === 'unlisted' ? [PUBLIC] : [a.id], manualApproval: [] },
    canQuote: { automaticApproval: [`${a.id}/followers`], manualApproval: [] },
  };
}

const gotosocial: Profile = {
  software: 'gotosocial',
  nodeinfo: { name: 'gotosocial', version: '0.17.3', path: '/nodeinfo/2.0', schema: '2.0' },
  sharedInbox: false,
  inboxAnswer: { status: 202, body: '{"status":"Accepted"}', contentType: 'application/json; charset=utf-8' },
  accountIds: (base, username) => ({ id: `${base}/users/${username}`, keyId: `${base}/users/${username}/main-key` }),
  actor: (base, a, pem) => ({
    '@context': GTS_ACTOR_CONTEXT,
    alsoKnownAs: [],
    attachment: [],
    discoverable: true,
    indexable: false,
    featured: `${a.id}/collections/featured`,
    followers: `${a.id}/followers`,
    following: `${a.id}/following`,
    id: a.id,
    inbox: `${a.id}/inbox`,
    manuallyApprovesFollowers: a.locked,
    name: a.displayName,
    outbox: `${a.id}/outbox`,
    preferredUsername: a.username,
    published: a.published,
    publicKey: { id: a.keyId, owner: a.id, publicKeyPem: pem },
    summary: '',
    tag: [],
    type: a.bot ? 'Service' : 'Person',
    url: `${base}/@${a.username}`,
  }),
  // GoToSocial answers its keyId with a stub of the actor: enough to verify, nothing more.
  keyDocument: (_base, a, pem) => ({
    '@context': [SECURITY, AS],
    id: a.id,
    type: a.bot ? 'Service' : 'Person',
    preferredUsername: a.username,
    publicKey: { id: a.keyId, owner: a.id, publicKeyPem: pem },
  }),
  instanceActor: (base, host, pem) => ({
    '@context': GTS_ACTOR_CONTEXT,
    id: `${base}/users/${host}`,
    type: 'Application',
    preferredUsername: host,
    inbox: `${base}/users/${host}/inbox`,
    outbox: `${base}/users/${host}/outbox`,
    followers: `${base}/users/${host}/followers`,
    following: `${base}/users/${host}/following`,
    manuallyApprovesFollowers: true,
    publicKey: { id: `${base}/users/${host}/main-key`, owner: `${base}/users/${host}`, publicKeyPem: pem },
    url: `${base}/@${host}`,
  }),
  webfinger: (base, host, a) => ({
    subject: webfingerSubject(host, a),
    aliases: [a.id, `${base}/@${a.username}`],
    links: [
      { rel: PROFILE_PAGE, type: 'text/html', href: `${base}/@${a.username}` },
      { rel: 'self', type: AS_TYPE, href: a.id },
    ],
  }),
  profileUrl: (base, a) => `${base}/@${a.username}`,
  newNote(base, a, { now, random }) {
    const u = ulid(now.getTime(), random);
    const id = `${a.id}/statuses/${u}`;
    return { id, activityId: `${id}/activity#Create`, url: `${base}/@${a.username}/statuses/${u}` };
  },
  address: toMentions,
  newThread: () => null,
  note: (_base, n, a) => {
    const html = `<p>${renderText(n.text, n.mentions, (m, user) => `<span class="h-card"><a href="${escapeHtml(m.href)}" class="u-url mention" rel="nofollow noreferrer noopener" target="_blank">@<span>${escapeHtml(user)}</span></a></span>`)}</p>`;
    return {
      attachment: [],
      attributedTo: a.id,
      cc: n.cc,
      content: html,
      contentMap: { en: html },
      id: n.id,
      inReplyTo: n.inReplyTo,
      interactionPolicy: gtsPolicy(n, a),
      published: n.published,
      replies: {
        first: { id: `${n.id}/replies?page=true`, next: `${n.id}/replies?only_other_accounts=false&page=true`, partOf: `${n.id}/replies`, type: 'CollectionPage' },
        id: `${n.id}/replies`,
        type: 'Collection',
      },
      sensitive: false,
      summary: '',
      tag: mentionTags(n),
      to: n.to,
      type: 'Note',
      url: n.url,
    };
  },
  create(base, n, a) {
    return { '@context': GTS_NOTE_CONTEXT, actor: a.id, cc: n.cc, id: n.activityId, object: withoutContext(this.note(base, n, a)), published: n.published, to: n.to, type: 'Create' };
  },
  follow: (_base, a, target, { now, random }) => ({ '@context': AS, actor: a.id, id: `${a.id}/follow/${ulid(now.getTime(), random)}`, object: target, type: 'Follow' }),
  accept: (_base, a, follow, { now, random }) => ({
    '@context': AS,
    actor: a.id,
    id: `${a.id}/accepts/${ulid(now.getTime(), random)}`,
    object: { actor: follow.actor, id: follow.id, object: a.id, type: 'Follow' },
    to: follow.actor,
    type: 'Accept',
  }),
  undo: (_base, a, activity, { now, random }) => ({ '@context': AS, actor: a.id, id: `${a.id}/undo/${ulid(now.getTime(), random)}`, object: withoutContext(activity), type: 'Undo' }),
  like: (_base, a, object, author, { now, random }) => ({
    '@context': AS,
    actor: a.id,
    id: `${a.id}/liked/${ulid(now.getTime(), random)}`,
    object,
    ...(author ? { to: author } : {}),
    type: 'Like',
  }),
  announce: (_base, a, object, author, { now, random }) => ({
    '@context': AS,
    actor: a.id,
    cc: [...(author ? [author] : []), `${a.id}/followers`],
    id: `${a.id}/statuses/${ulid(now.getTime(), random)}`,
    object,
    published: now.toISOString(),
    to: PUBLIC,
    type: 'Announce',
  }),
};

// --- Misskey ---------------------------------------------------------------------------------

const MISSKEY_CONTEXT = [
  AS,
  SECURITY,
  {
    Key: 'sec:Key',
    manuallyApprovesFollowers: 'as:manuallyApprovesFollowers',
    sensitive: 'as:sensitive',
    Hashtag: 'as:Hashtag',
    quoteUrl: 'as:quoteUrl',
    toot: 'http://joinmastodon.org/ns#',
    Emoji: 'toot:Emoji',
    featured: 'toot:featured',
    discoverable: 'toot:discoverable',
    schema: 'http://schema.org#',
    PropertyValue: 'schema:PropertyValue',
    value: 'schema:value',
    misskey: 'https://misskey-hub.net/ns#',
    _misskey_content: 'misskey:_misskey_content',
    _misskey_quote: 'misskey:_misskey_quote',
    _misskey_reaction: 'misskey:_misskey_reaction',
    _misskey_votes: 'misskey:_misskey_votes',
    _misskey_summary: 'misskey:_misskey_summary',
    _misskey_followedMessage: 'misskey:_misskey_followedMessage',
    isCat: 'misskey:isCat',
    vcard: 'http://www.w3.org/2006/vcard/ns#',
  },
];

/** Misskey's user ids are aid values; a peer numbers its accounts so the same scenario gets the same ids. */
function misskeyUserId(serial: number): string {
  return `9x${serial.toString(36).padStart(8, '0')}`;
}

const misskey: Profile = {
  software: 'misskey',
  nodeinfo: { name: 'misskey', version: '2024.11.0', path: '/nodeinfo/2.1', schema: '2.1' },
  sharedInbox: true,
  inboxAnswer: { status: 202, body: '', contentType: null },
  accountIds: (base, _username, serial) => {
    const id = `${base}/users/${misskeyUserId(serial)}`;
    return { id, keyId: `${id}#main-key` };
  },
  actor: (base, a, pem) => ({
    '@context': MISSKEY_CONTEXT,
    type: a.bot ? 'Service' : 'Person',
    id: a.id,
    inbox: `${a.id}/inbox`,
    outbox: `${a.id}/outbox`,
    followers: `${a.id}/followers`,
    following: `${a.id}/following`,
    featured: `${a.id}/collections/featured`,
    sharedInbox: `${base}/inbox`,
    endpoints: { sharedInbox: `${base}/inbox` },
    url: `${base}/@${a.username}`,
    preferredUsername: a.username,
    name: a.displayName,
    summary: null,
    _misskey_summary: null,
    _misskey_followedMessage: null,
    icon: null,
    image: null,
    backgroundUrl: null,
    tag: [],
    manuallyApprovesFollowers: a.locked,
    discoverable: true,
    publicKey: { id: a.keyId, type: 'Key', owner: a.id, publicKeyPem: pem },
    isCat: false,
    noindex: false,
    enableRss: true,
    speakAsCat: false,
    attachment: [],
  }),
  keyDocument: () => null,
  instanceActor: (base, _host, pem) => {
    const id = `${base}/users/${misskeyUserId(0)}`;
    return {
      '@context': MISSKEY_CONTEXT,
      type: 'Application',
      id,
      inbox: `${id}/inbox`,
      outbox: `${id}/outbox`,
      followers: `${id}/followers`,
      following: `${id}/following`,
      sharedInbox: `${base}/inbox`,
      endpoints: { sharedInbox: `${base}/inbox` },
      url: `${base}/@instance.actor`,
      preferredUsername: 'instance.actor',
      manuallyApprovesFollowers: true,
      discoverable: false,
      publicKey: { id: `${id}#main-key`, type: 'Key', owner: id, publicKeyPem: pem },
    };
  },
  webfinger: (base, host, a) => ({
    subject: webfingerSubject(host, a),
    links: [
      { rel: 'self', type: AS_TYPE, href: a.id },
      { rel: PROFILE_PAGE, type: 'text/html', href: `${base}/@${a.username}` },
      { rel: SUBSCRIBE, template: `${base}/authorize-follow?acct={uri}` },
    ],
  }),
  profileUrl: (base, a) => `${base}/@${a.username}`,
  newNote(base, _a, { now, random }) {
    const id = `${base}/notes/${aid(now.getTime(), random)}`;
    return { id, activityId: `${id}/activity`, url: id };
  },
  address: ccMentions,
  newThread: () => null,
  note: (_base, n, a) => ({
    id: n.id,
    type: 'Note',
    attributedTo: a.id,
    summary: null,
    content: `<p>${renderText(n.text, n.mentions, (m) => `<a href="${escapeHtml(m.href)}" class="u-url mention">${escapeHtml(m.name)}</a>`)}</p>`,
    _misskey_content: n.text,
    source: { content: n.text, mediaType: 'text/x.misskeymarkdown' },
    published: n.published,
    to: n.to,
    cc: n.cc,
    inReplyTo: n.inReplyTo,
    attachment: [],
    sensitive: false,
    tag: mentionTags(n),
  }),
  create(base, n, a) {
    return { '@context': MISSKEY_CONTEXT, id: n.activityId, actor: a.id, type: 'Create', published: n.published, object: withoutContext(this.note(base, n, a)), to: n.to, cc: n.cc };
  },
  follow: (base, a, target) => ({
    '@context': MISSKEY_CONTEXT,
    id: `${base}/follows/${a.id.slice(a.id.lastIndexOf('/') + 1)}/${shortHash(target)}`,
    type: 'Follow',
    actor: a.id,
    object: target,
  }),
  accept: (base, a, follow, { random }) => ({
    '@context': MISSKEY_CONTEXT,
    id: `${base}/${uuid(random)}`,
    type: 'Accept',
    actor: a.id,
    object: { id: follow.id, type: 'Follow', actor: follow.actor, object: a.id },
  }),
  undo: (base, a, activity, { random }) => ({ '@context': MISSKEY_CONTEXT, id: `${base}/${uuid(random)}`, type: 'Undo', actor: a.id, object: withoutContext(activity) }),
  // A Misskey like is a reaction; the plain like is the heart.
  like: (base, a, object, _author, { now, random }) => ({
    '@context': MISSKEY_CONTEXT,
    type: 'Like',
    id: `${base}/likes/${aid(now.getTime(), random)}`,
    actor: a.id,
    object,
    content: '❤',
    _misskey_reaction: '❤',
  }),
  announce: (base, a, object, author, { now, random }) => ({
    '@context': MISSKEY_CONTEXT,
    id: `${base}/notes/${aid(now.getTime(), random)}/activity`,
    actor: a.id,
    type: 'Announce',
    published: now.toISOString(),
    to: [PUBLIC],
    cc: [...(author ? [author] : []), `${a.id}/followers`],
    object,
  }),
};

// --- Pleroma ---------------------------------------------------------------------------------

export const LITEPUB_PATH = '/schemas/litepub-0.1.jsonld';

/** The litepub context a Pleroma peer serves at LITEPUB_PATH: the terms its documents use. */
export const LITEPUB_CONTEXT = {
  '@context': [
    AS,
    SECURITY,
    {
      Emoji: 'toot:Emoji',
      Hashtag: 'as:Hashtag',
      PropertyValue: 'schema:PropertyValue',
      atomUri: 'ostatus:atomUri',
      conversation: { '@id': 'ostatus:conversation', '@type': '@id' },
      discoverable: 'toot:discoverable',
      manuallyApprovesFollowers: 'as:manuallyApprovesFollowers',
      capabilities: 'litepub:capabilities',
      ostatus: 'http://ostatus.org#',
      schema: 'http://schema.org#',
      toot: 'http://joinmastodon.org/ns#',
      value: 'schema:value',
      sensitive: 'as:sensitive',
      litepub: 'http://litepub.social/ns#',
      invisible: 'litepub:invisible',
      directMessage: 'litepub:directMessage',
      alsoKnownAs: { '@id': 'as:alsoKnownAs', '@type': '@id' },
      quoteUrl: 'as:quoteUrl',
      votersCount: 'toot:votersCount',
    },
  ],
};

function pleromaContext(base: string): unknown[] {
  return [AS, `${base}${LITEPUB_PATH}`, { '@language': 'und' }];
}

const pleroma: Profile = {
  software: 'pleroma',
  nodeinfo: { name: 'pleroma', version: '2.7.0', path: '/nodeinfo/2.0.json', schema: '2.0' },
  sharedInbox: true,
  inboxAnswer: { status: 200, body: '"ok"', contentType: 'application/json; charset=utf-8' },
  accountIds: (base, username) => ({ id: `${base}/users/${username}`, keyId: `${base}/users/${username}#main-key` }),
  actor: (base, a, pem) => ({
    '@context': pleromaContext(base),
    alsoKnownAs: [],
    attachment: [],
    capabilities: { acceptsChatMessages: true },
    discoverable: true,
    endpoints: {
      oauthAuthorizationEndpoint: `${base}/oauth/authorize`,
      oauthRegistrationEndpoint: `${base}/api/v1/apps`,
      oauthTokenEndpoint: `${base}/oauth/token`,
      sharedInbox: `${base}/inbox`,
      uploadMedia: `${base}/api/ap/upload_media`,
    },
    featured: `${a.id}/collections/featured`,
    followers: `${a.id}/followers`,
    following: `${a.id}/following`,
    id: a.id,
    inbox: `${a.id}/inbox`,
    invisible: false,
    manuallyApprovesFollowers: a.locked,
    name: a.displayName,
    outbox: `${a.id}/outbox`,
    preferredUsername: a.username,
    publicKey: { id: a.keyId, owner: a.id, publicKeyPem: pem },
    summary: '',
    tag: [],
    type: a.bot ? 'Service' : 'Person',
    url: a.id,
  }),
  keyDocument: () => null,
  instanceActor: (base, _host, pem) => ({
    '@context': pleromaContext(base),
    id: `${base}/internal/fetch`,
    type: 'Application',
    preferredUsername: 'internal.fetch',
    name: 'Pleroma',
    url: `${base}/internal/fetch`,
    inbox: `${base}/internal/fetch/inbox`,
    outbox: `${base}/internal/fetch/outbox`,
    manuallyApprovesFollowers: false,
    invisible: true,
    discoverable: false,
    endpoints: { sharedInbox: `${base}/inbox` },
    publicKey: { id: `${base}/internal/fetch#main-key`, owner: `${base}/internal/fetch`, publicKeyPem: pem },
  }),
  webfinger: (base, host, a) => ({
    subject: webfingerSubject(host, a),
    aliases: [a.id],
    links: [
      { rel: PROFILE_PAGE, type: 'text/html', href: a.id },
      { rel: 'self', type: AS_TYPE, href: a.id },
      { rel: 'self', type: 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"', href: a.id },
      { rel: SUBSCRIBE, template: `${base}/ostatus_subscribe?acct={uri}` },
    ],
  }),
  profileUrl: (_base, a) => a.id,
  newNote(base, _a, { random }) {
    const id = `${base}/objects/${uuid(random)}`;
    return { id, activityId: `${base}/activities/${uuid(random)}`, url: id };
  },
  address: toMentions,
  newThread: (base, _host, { random }) => `${base}/contexts/${uuid(random)}`,
  note: (_base, n, a) => ({
    actor: a.id,
    attachment: [],
    attributedTo: a.id,
    cc: n.cc,
    content: renderText(n.text, n.mentions, (m, user) => `<span class="h-card"><a class="u-url mention" href="${escapeHtml(m.href)}" rel="ugc">@<span>${escapeHtml(user)}</span></a></span>`),
    context: n.thread,
    conversation: n.thread,
    id: n.id,
    inReplyTo: n.inReplyTo,
    published: n.published,
    sensitive: false,
    source: { content: n.text, mediaType: 'text/plain' },
    summary: '',
    tag: mentionTags(n),
    to: n.to,
    type: 'Note',
  }),
  create(base, n, a) {
    return {
      '@context': pleromaContext(base),
      actor: a.id,
      cc: n.cc,
      context: n.thread,
      directMessage: n.visibility === 'direct',
      id: n.activityId,
      object: withoutContext(this.note(base, n, a)),
      published: n.published,
      to: n.to,
      type: 'Create',
    };
  },
  follow: (base, a, target, { random }) => ({
    '@context': pleromaContext(base),
    actor: a.id,
    bcc: [],
    bto: [],
    cc: [],
    id: `${base}/activities/${uuid(random)}`,
    object: target,
    state: 'pending',
    to: [target],
    type: 'Follow',
  }),
  accept: (base, a, follow, { random }) => ({
    '@context': pleromaContext(base),
    actor: a.id,
    bcc: [],
    bto: [],
    cc: [],
    id: `${base}/activities/${uuid(random)}`,
    object: { actor: follow.actor, id: follow.id, object: a.id, type: 'Follow' },
    to: [follow.actor],
    type: 'Accept',
  }),
  undo: (base, a, activity, { random }) => ({
    '@context': pleromaContext(base),
    actor: a.id,
    bcc: [],
    bto: [],
    cc: [],
    id: `${base}/activities/${uuid(random)}`,
    object: withoutContext(activity),
    to: Array.isArray(activity.to) ? activity.to : [],
    type: 'Undo',
  }),
  like: (base, a, object, author, ids, _serial, thread) => ({
    '@context': pleromaContext(base),
    actor: a.id,
    bcc: [],
    bto: [],
    cc: [`${a.id}/followers`],
    context: thread ?? pleroma.newThread(base, '', ids),
    id: `${base}/activities/${uuid(ids.random)}`,
    object,
    to: author ? [author] : [],
    type: 'Like',
  }),
  announce: (base, a, object, author, ids, thread) => ({
    '@context': pleromaContext(base),
    actor: a.id,
    bcc: [],
    bto: [],
    cc: [`${a.id}/followers`, ...(author ? [author] : [])],
    context: thread ?? pleroma.newThread(base, '', ids),
    id: `${base}/activities/${uuid(ids.random)}`,
    object,
    published: ids.now.toISOString(),
    to: [PUBLIC],
    type: 'Announce',
  }),
};

function withoutContext(doc: Json): Json {
  const { '@context': _dropped, ...rest } = doc;
  return rest;
}

export const PROFILES: Record<PeerSoftware, Profile> = { mastodon, gotosocial, misskey, pleroma };
