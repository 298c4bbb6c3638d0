/** Rows → ActivityPub objects (Fedify vocabulary). */
import {
  Accept,
  Add,
  Announce,
  Block,
  Flag,
  Collection,
  CollectionPage,
  Question,
  Create,
  Delete,
  Endpoints,
  Hashtag,
  LanguageString,
  Like,
  Mention,
  Note,
  Tombstone,
  Follow,
  Image,
  InteractionPolicy,
  InteractionRule,
  QuoteAuthorization,
  QuoteRequest,
  Move,
  Person,
  PUBLIC_COLLECTION,
  Reject,
  Remove,
  Service,
  Group,
  Application,
  Organization,
  PropertyValue,
  Undo,
  Update,
  type CryptographicKey,
  type Multikey,
} from '@fedify/vocab';
import type { Context } from '@fedify/fedify';
import { Temporal as TemporalPolyfill } from '@js-temporal/polyfill';
import type { Account } from '../../db/entities/index.ts';
import { formatFieldValue, formatPlainText, handleKey, type MentionTarget } from '../../lib/text-format.ts';
import { MediaCreate, MediaDocument, MediaNote, MediaQuestion, MediaUpdate } from './mastodon-media.ts';
import { toAsEmoji, type EmojiFacts } from './to-as-emojis-tags.ts';

/** What the actor's HTML needs besides the row: the local domain and the accounts its bio mentions. */
export interface ActorProfileFacts {
  localDomain: string;
  /** Known accounts the bio and fields mention, by handleKey (services/account-views.ts mentionTargets). */
  mentions: ReadonlyMap<string, MentionTarget>;
  /** The local custom emojis its name, bio and fields use (Emoji tags). */
  emojis?: EmojiFacts[];
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** The media type of a stored image, from its file extension (media-store names files by the sniffed type). */
function imageType(url: string): string | null {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return (ext && IMAGE_TYPES[ext]) ?? null;
}

/** Mastodon publishes an actor's creation date rounded down to midnight UTC (as the REST created_at). */
function creationDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

const ACTOR_CLASSES = { Person, Service, Group, Application, Organization } as const;

export function toAsActor(
  ctx: Context<unknown>,
  account: Account,
  keys: { publicKey: CryptographicKey | null; assertionMethods: Multikey[] },
  movedTo: string | null = null,
  profile: ActorProfileFacts = { localDomain: ctx.canonicalOrigin ? new URL(ctx.canonicalOrigin).host : '', mentions: new Map() },
): Person | Service | Group | Application | Organization {
  const cls = ACTOR_CLASSES[account.actorType as keyof typeof ACTOR_CLASSES] ?? Person;
  const id = ctx.getActorUri(account.username);
  // The bio and field values as the REST API renders them (text-format.ts): peers show HTML, and
  // a rel="me" link in a field value is what their link verification looks for.
  const format = {
    baseUrl: ctx.canonicalOrigin,
    localDomain: profile.localDomain,
    resolveMention: (username: string, domain: string | null) => profile.mentions.get(handleKey(username, domain)),
  };
  const image = (url: string | null | undefined) => (url ? new Image({ url: new URL(url), mediaType: imageType(url) }) : null);
  return new cls({
    id,
    preferredUsername: account.username,
    // Always present (Mastodon sends its display name, "" when none).
    name: account.displayName,
    summary: formatPlainText(account.note, format) || null,
    url: account.url ? new URL(account.url) : null,
    published: toInstant(creationDay(account.createdAt)),
    manuallyApprovesFollowers: account.locked,
    discoverable: account.discoverable ?? false,
    indexable: account.indexable,
    inbox: ctx.getInboxUri(account.username),
    outbox: ctx.getOutboxUri(account.username),
    followers: ctx.getFollowersUri(account.username),
    following: ctx.getFollowingUri(account.username),
    featured: ctx.getFeaturedUri(account.username),
    featuredTags: ctx.getFeaturedTagsUri(account.username),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    publicKey: keys.publicKey,
    assertionMethods: keys.assertionMethods,
    icon: image(account.avatarUrl),
    image: image(account.headerUrl),
    attachments: account.fields.map((f) => new PropertyValue({ name: f.name, value: formatFieldValue(f.value, format) })),
    // alsoKnownAs: the accounts this one says it also is (a Move to it is accepted from those).
    aliases: (account.alsoKnownAs ?? []).map((u) => new URL(u)),
    // movedTo: where this account went (a Move was sent); Mastodon shows the redirect from it.
    successor: movedTo ? new URL(movedTo) : null,
    tags: (profile.emojis ?? []).map(toAsEmoji),
  });
}

/** A local account's actor document with its published keys (RSA first, then Ed25519). */
export async function localActor(ctx: Context<unknown>, account: Account, movedTo: string | null, profile?: ActorProfileFacts) {
  const pairs = await ctx.getActorKeyPairs(account.username);
  return toAsActor(ctx, account, { publicKey: pairs[0]?.cryptographicKey ?? null, assertionMethods: pairs.map((p) => p.multikey) }, movedTo, profile);
}

/**
 * Fedify's vocabulary is typed against the global Temporal but, like Node 24, runs on the
 * polyfill it depends on; the instant is built with that same polyfill.
 */
export function toInstant(date: Date): Temporal.Instant {
  return TemporalPolyfill.Instant.fromEpochMilliseconds(date.getTime()) as unknown as Temporal.Instant;
}

// --- Outbound activities: pure builders from rows (effects/dispatch.ts sends them) -----------

/** The two ends of a follow, as the activities name them. */
export interface FollowEnds {
  /** follows.id */
  id: string;
  /** The Follow activity's id (follows.uri), when it has one. */
  uri: string | null;
  /** The follow actor's version: each Accept/Reject/Undo of a new version gets a new id. */
  version: number;
  followerUri: string;
  targetUri: string;
}

/** The Follow activity a follow row stands for (also embedded in Accept, Reject and Undo). */
export function toAsFollow(f: FollowEnds): Follow {
  return new Follow({ id: f.uri ? new URL(f.uri) : null, actor: new URL(f.followerUri), object: new URL(f.targetUri) });
}

/** The local target accepts the follow. */
export function toAsAccept(f: FollowEnds): Accept {
  return new Accept({ id: new URL(`${f.targetUri}#accepts/follows/${f.id}/${f.version}`), actor: new URL(f.targetUri), object: toAsFollow(f) });
}

/** The local target rejects a request, or removes a follower. */
export function toAsReject(f: FollowEnds): Reject {
  return new Reject({ id: new URL(`${f.targetUri}#rejects/follows/${f.id}/${f.version}`), actor: new URL(f.targetUri), object: toAsFollow(f) });
}

/**
 * A Follow refused before any follow row exists (the target hides the follower's domain): the
 * Reject embeds the remote activity by its id; `eventId` (the outbox event) makes its id unique.
 */
export function toAsRejectActivity(r: { targetUri: string; followerUri: string; activityUri: string; eventId: string }): Reject {
  return new Reject({
    id: new URL(`${r.targetUri}#rejects/${r.eventId}`),
    actor: new URL(r.targetUri),
    object: new Follow({ id: new URL(r.activityUri), actor: new URL(r.followerUri), object: new URL(r.targetUri) }),
  });
}

/** The local follower unfollows, or withdraws a request. */
export function toAsUndoFollow(f: FollowEnds): Undo {
  return new Undo({ id: new URL(`${f.followerUri}#follows/${f.id}/undo/${f.version}`), actor: new URL(f.followerUri), object: toAsFollow(f) });
}

export function toAsBlock(b: { uri: string; actorUri: string; targetUri: string }): Block {
  return new Block({ id: new URL(b.uri), actor: new URL(b.actorUri), object: new URL(b.targetUri) });
}

export function toAsUndoBlock(b: { uri: string; actorUri: string; targetUri: string }): Undo {
  return new Undo({ id: new URL(`${b.uri}/undo`), actor: new URL(b.actorUri), object: toAsBlock(b) });
}

/**
 * Flag: a report forwarded to the reported account's server (Mastodon's ReportSerializer), from
 * the instance actor (the reporter stays anonymous): the account and the statuses cited, the comment.
 */
export function toAsFlag(f: { id: string; actorUri: string; targetUri: string; statusUris: string[]; comment: string }): Flag {
  return new Flag({
    id: new URL(f.id),
    actor: new URL(f.actorUri),
    objects: [new URL(f.targetUri), ...f.statusUris.map((u) => new URL(u))],
    content: f.comment,
  });
}

/** Update(Person): the actor document to every follower's server. */
export function toAsUpdateActor(actorUri: string, at: Date, actor: Person | Service | Group | Application | Organization): Update {
  return new Update({ id: new URL(`${actorUri}#updates/${at.getTime()}`), actor: new URL(actorUri), to: PUBLIC_COLLECTION, object: actor });
}

/**
 * Delete of the actor itself (Mastodon's DeleteActorSerializer): a local account was suspended, so
 * its followers' servers drop it and its posts. `eventId` (the suspension's outbox event) makes
 * each suspension's Delete its own activity, the same on a retry.
 */
export function toAsDeleteActor(d: { actorUri: string; eventId: string }): Delete {
  return new Delete({ id: new URL(`${d.actorUri}#delete/${d.eventId}`), actor: new URL(d.actorUri), to: PUBLIC_COLLECTION, object: new URL(d.actorUri) });
}

/** Move: the account went to `targetUri`; `moveId` is fresh for each (re)sent Move. */
export function toAsMove(m: { actorUri: string; targetUri: string; moveId: string }): Move {
  return new Move({
    id: new URL(`${m.actorUri}#moves/${m.moveId}`),
    actor: new URL(m.actorUri),
    object: new URL(m.actorUri),
    target: new URL(m.targetUri),
    to: PUBLIC_COLLECTION,
  });
}

// --- Statuses: Note and the activities about it (effects/dispatch.ts, the object dispatcher) ---

/** An account a status mentions, as the Note's tag and addressing name it. */
export interface NoteMention {
  uri: string;
  /** user@domain (the local domain for local accounts). */
  acct: string;
}

/** A media attachment of a Note: a Document with Mastodon's blurhash and focalPoint (./mastodon-media.ts). */
export interface NoteAttachment {
  url: string;
  mediaType: string | null;
  description: string | null;
  width?: number | null;
  height?: number | null;
  blurhash?: string | null;
  focalPoint?: readonly [number, number] | null;
}

/** Everything a Note needs, read from the status row and its mentions and tags (federation/statuses.ts). */
export interface NoteFacts {
  uri: string;
  url: string | null;
  authorUri: string;
  followersUri: string;
  visibility: string;
  content: string;
  language: string | null;
  spoilerText: string;
  sensitive: boolean;
  inReplyToUri: string | null;
  /** Its thread's URI (Mastodon's `conversation`, also sent as `context` without one below); null when unknown. */
  conversation?: string | null;
  /** Its thread as a collection (FEP-7888 `context`, Mastodon 4.5's /contexts/…) when the thread is rooted here. */
  context?: string | null;
  published: Date;
  editedAt: Date | null;
  /** Active (not silent) mentions, in the order they were made. */
  mentions: NoteMention[];
  hashtags: { name: string; href: string }[];
  attachments?: NoteAttachment[];
  /** The local custom emojis its text uses (Emoji tags). */
  emojis?: EmojiFacts[];
  /** The status' poll (not deleted): the status is a Question then. */
  poll?: NotePoll | null;
  /** A local status's favourites and reblogs: the Note's `likes` and `shares` (totalItems), as Mastodon's NoteSerializer. */
  counts?: { likes: number; shares: number };
  /** The post it quotes (FEP-044f `quote`, with `quoteUri` and `_misskey_quote`), and its authorization once accepted. */
  quote?: { uri: string; authorization: string | null } | null;
  /**
   * A local status's quote policy as its `interactionPolicy.canQuote.automaticApproval` (Mastodon's
   * NoteSerializer): Public, the followers collection, or the author alone (nobody else).
   */
  quotePolicy?: string | null;
}

/** A status' poll, as its Question shows it. */
export interface NotePoll {
  /** The options in order, with their counts (null while the poll hides its totals, as Mastodon). */
  options: { title: string; votes: number | null }[];
  multiple: boolean;
  endTime: Date | null;
  /** Set once the poll has ended. */
  closedAt: Date | null;
  votersCount: number;
}

/**
 * to and cc as Mastodon addresses a status (ActivityPub::TagManager#to / #cc): public → to Public,
 * cc followers; unlisted → to followers, cc Public; private → to followers; direct and limited →
 * to the mentioned accounts only. A reblog also carries the original's author first in cc;
 * mentions go in cc except for direct and limited statuses.
 */
export function statusAddressing(a: { visibility: string; followersUri: string; mentionUris: string[]; reblogOfAuthorUri?: string | null }): { to: URL[]; cc: URL[] } {
  const mentions = [...new Set(a.mentionUris)].map((u) => new URL(u));
  const followers = new URL(a.followersUri);
  const cc: URL[] = a.reblogOfAuthorUri ? [new URL(a.reblogOfAuthorUri)] : [];
  switch (a.visibility) {
    case 'public':
      return { to: [PUBLIC_COLLECTION], cc: [...cc, followers, ...mentions] };
    case 'unlisted':
      return { to: [followers], cc: [...cc, PUBLIC_COLLECTION, ...mentions] };
    case 'private':
      return { to: [followers], cc: [...cc, ...mentions] };
    default:
      return { to: mentions, cc };
  }
}

function noteAddressing(n: NoteFacts) {
  return statusAddressing({ visibility: n.visibility, followersUri: n.followersUri, mentionUris: n.mentions.map((m) => m.uri) });
}

/**
 * The fields every status object shares, Note or Question (Mastodon's NoteSerializer): id, url,
 * attribution, addressing, content and contentMap by language, summary, sensitivity, reply
 * target, dates, Mention and Hashtag tags, attachments, and a local status's `likes` and `shares`
 * (totalItems: its favourites and reblogs; peers show them as untrusted counts).
 */
function statusObjectValues(n: NoteFacts) {
  const { to, cc } = noteAddressing(n);
  return {
    id: new URL(n.uri),
    url: n.url ? new URL(n.url) : null,
    attribution: new URL(n.authorUri),
    tos: to,
    ccs: cc,
    summary: n.spoilerText === '' ? null : n.spoilerText,
    contents: n.language ? [n.content, new LanguageString(n.content, n.language)] : [n.content],
    sensitive: n.sensitive,
    replyTarget: n.inReplyToUri ? new URL(n.inReplyToUri) : null,
    published: toInstant(n.published),
    updated: n.editedAt ? toInstant(n.editedAt) : null,
    tags: [
      ...n.mentions.map((m) => new Mention({ href: new URL(m.uri), name: `@${m.acct}` })),
      ...n.hashtags.map((t) => new Hashtag({ href: new URL(t.href), name: `#${t.name}` })),
      ...(n.emojis ?? []).map(toAsEmoji),
    ],
    attachments: (n.attachments ?? []).map(
      (a) =>
        new MediaDocument({
          url: new URL(a.url),
          mediaType: a.mediaType,
          name: a.description,
          width: a.width ?? null,
          height: a.height ?? null,
          blurhash: a.blurhash ?? null,
          focalPoint: a.focalPoint ?? null,
        }),
    ),
    ...(n.context || n.conversation ? { contexts: [new URL((n.context ?? n.conversation)!)] } : {}),
    // Fedify writes `quoteUrl` as `quoteUrl`, `quoteUri` and `_misskey_quote` (what servers without FEP-044f read).
    ...(n.quote
      ? { quote: new URL(n.quote.uri), quoteUrl: new URL(n.quote.uri), quoteAuthorization: n.quote.authorization ? new URL(n.quote.authorization) : null }
      : {}),
    ...(n.quotePolicy !== undefined ? { interactionPolicy: quoteInteractionPolicy(n) } : {}),
    ostatus: { atomUri: n.uri, inReplyToAtomUri: n.inReplyToUri, conversation: n.conversation ?? null },
    ...(n.counts
      ? {
          // An empty first page (a status is sent before anyone replies), its next the served
          // collection's first page, as Mastodon's NoteSerializer embeds it. The object dispatcher
          // serves the real first page (federation/collections.ts withNoteCollections).
          replies: new Collection({
            id: new URL(`${n.uri}/replies`),
            first: new CollectionPage({ partOf: new URL(`${n.uri}/replies`), items: [], next: new URL(`${n.uri}/replies?cursor=first`) }),
          }),
          likes: new Collection({ id: new URL(`${n.uri}/likes`), totalItems: n.counts.likes }),
          shares: new Collection({ id: new URL(`${n.uri}/shares`), totalItems: n.counts.shares }),
        }
      : {}),
  };
}

/** Who may quote a local status without review (FEP-044f canQuote): nobody else is the author alone, as Mastodon writes it. */
function quoteInteractionPolicy(n: NoteFacts): InteractionPolicy {
  const open = n.visibility === 'public' || n.visibility === 'unlisted';
  const approved = !open || n.quotePolicy === 'nobody' || !n.quotePolicy ? [new URL(n.authorUri)]
    : n.quotePolicy === 'public' ? [PUBLIC_COLLECTION] : [new URL(n.followersUri)];
  return new InteractionPolicy({ canQuote: new InteractionRule({ automaticApprovals: approved }) });
}

/** A QuoteRequest of a local quote to the quoted post's author (Mastodon's QuoteRequestSerializer, the quoting Note inlined). */
export function toAsQuoteRequest(r: { id: string; actorUri: string; quotedUri: string; note: NoteFacts }): QuoteRequest {
  return new QuoteRequest({ id: new URL(r.id), actor: new URL(r.actorUri), object: new URL(r.quotedUri), instrument: toAsStatusObject(r.note) });
}

/** The stamp a local author gives a quote (Mastodon's QuoteAuthorizationSerializer), served at its id. */
export function toAsQuoteAuthorization(a: { id: string; authorUri: string; quotingUri: string; quotedUri: string }): QuoteAuthorization {
  return new QuoteAuthorization({
    id: new URL(a.id),
    attribution: new URL(a.authorUri),
    interactingObject: new URL(a.quotingUri),
    interactionTarget: new URL(a.quotedUri),
  });
}

/** Accept of a QuoteRequest, with the stamp as `result` (Mastodon's AcceptQuoteRequestSerializer). */
export function toAsAcceptQuote(a: { quoteId: string; quotedAuthorUri: string; requesterUri: string; activityUri: string; quotedUri: string; quotingUri: string; approvalUri: string }): Accept {
  return new Accept({
    id: new URL(`${a.quotedAuthorUri}#accepts/quote_requests/${a.quoteId}`),
    actor: new URL(a.quotedAuthorUri),
    object: new QuoteRequest({ id: new URL(a.activityUri), actor: new URL(a.requesterUri), object: new URL(a.quotedUri), instrument: new URL(a.quotingUri) }),
    result: new URL(a.approvalUri),
  });
}

/** Reject of a QuoteRequest the policy refuses (Mastodon's RejectQuoteRequestSerializer); `key` (the outbox event) makes its id. */
export function toAsRejectQuote(r: { key: string; quotedAuthorUri: string; requesterUri: string; activityUri: string; quotedUri: string; quotingUri: string }): Reject {
  return new Reject({
    id: new URL(`${r.quotedAuthorUri}#rejects/quote_requests/${r.key}`),
    actor: new URL(r.quotedAuthorUri),
    object: new QuoteRequest({ id: new URL(r.activityUri), actor: new URL(r.requesterUri), object: new URL(r.quotedUri), instrument: new URL(r.quotingUri) }),
  });
}

/** Delete of a stamp the quoted author takes back (Mastodon's RevokeQuoteService). */
export function toAsDeleteAuthorization(d: { approvalUri: string; authorUri: string }): Delete {
  return new Delete({ id: new URL(`${d.approvalUri}#delete`), actor: new URL(d.authorUri), to: PUBLIC_COLLECTION, object: new URL(d.approvalUri) });
}

/** The Note a status without a poll is (Mastodon's NoteSerializer). */
export function toAsNote(n: NoteFacts): Note {
  return new MediaNote(statusObjectValues(n));
}

/**
 * A status with a poll as Mastodon's Question: the Note's fields, plus `oneOf` (single choice) or
 * `anyOf` (multiple) of Notes named after the options, each with `replies.totalItems` = its
 * votes; `endTime`, `closed` (once ended), `votersCount`. The same object is the Create's, an
 * edit's Update's and each throttled poll Update's (with the latest tallies).
 */
export function toAsQuestion(n: NoteFacts & { poll: NotePoll }): Question {
  const p = n.poll;
  const options = p.options.map((o) => new Note({ name: o.title, replies: new Collection({ totalItems: o.votes }) }));
  // (A count of null leaves `totalItems` out: a poll hiding its totals until its end.)
  return new MediaQuestion({
    ...statusObjectValues(n),
    ...(p.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
    endTime: p.endTime ? toInstant(p.endTime) : null,
    closed: p.closedAt ? toInstant(p.closedAt) : null,
    voters: p.votersCount,
  });
}

/** What a status is at its URI and in its Create and Updates: a Question when it has a poll, else a Note. */
export function toAsStatusObject(n: NoteFacts): Note | Question {
  return n.poll ? toAsQuestion({ ...n, poll: n.poll }) : toAsNote(n);
}

/** Create(Note), or Create(Question) for a status with a poll: id `<status uri>/activity`, addressed as the Note. */
export function toAsCreateNote(n: NoteFacts): Create {
  const { to, cc } = noteAddressing(n);
  return new MediaCreate({ id: new URL(`${n.uri}/activity`), actor: new URL(n.authorUri), published: toInstant(n.published), tos: to, ccs: cc, object: toAsStatusObject(n) });
}

/** Update(Note) (or Update(Question)) after an edit: a new id per edit time, addressed as the Note. */
export function toAsUpdateNote(n: NoteFacts, key?: string): Update {
  const at = n.editedAt ?? n.published;
  const { to, cc } = noteAddressing(n);
  // `key`: an Update that is not an edit (a quote's stamp arrived) has an id of its own.
  return new MediaUpdate({ id: new URL(`${n.uri}#updates/${key ?? at.getTime()}`), actor: new URL(n.authorUri), published: toInstant(at), tos: to, ccs: cc, object: toAsStatusObject(n) });
}

/**
 * The throttled Update(Question) of a local poll's new tallies (Mastodon's UpdatePollSerializer),
 * addressed as the Note. `key` makes its id unique per Update sent (the outbox event's id): peers
 * drop an activity whose id they have seen, and two Updates may carry the same poll.
 */
export function toAsUpdatePoll(n: NoteFacts & { poll: NotePoll }, key: string): Update {
  const { to, cc } = noteAddressing(n);
  return new MediaUpdate({ id: new URL(`${n.uri}#updates/poll/${key}`), actor: new URL(n.authorUri), tos: to, ccs: cc, object: toAsQuestion(n) });
}

/** A pin or unpin: the status added to (removed from) its author's featured collection. */
export interface PinFacts {
  pinId: string;
  actorUri: string;
  /** The author's featured collection (Mastodon's /collections/featured). */
  featuredUri: string;
  statusUri: string;
}

/**
 * Add of a pinned status to the featured collection (Mastodon's AddSerializer: object the status
 * URI, target the collection). Mastodon gives it no id; Roost's is the pin's, stable under retries.
 */
export function toAsAdd(p: PinFacts): Add {
  return new Add({ id: new URL(`${p.actorUri}#pins/${p.pinId}`), actor: new URL(p.actorUri), object: new URL(p.statusUri), target: new URL(p.featuredUri) });
}

/** Remove of an unpinned status from the featured collection (Mastodon's RemoveSerializer). */
export function toAsRemove(p: PinFacts): Remove {
  return new Remove({ id: new URL(`${p.actorUri}#pins/${p.pinId}/remove`), actor: new URL(p.actorUri), object: new URL(p.statusUri), target: new URL(p.featuredUri) });
}

/** A local account's vote on a remote poll, one per choice (Mastodon's VoteSerializer). */
export interface VoteFacts {
  /** The vote row's id; with the choice, it names the Note. */
  voteId: string;
  choice: number;
  /** The option's title: the Note's `name`. */
  name: string;
  voterUri: string;
  questionUri: string;
  pollAuthorUri: string;
}

/**
 * Create(Note) of one vote, as Mastodon sends it: a Note with no content whose `name` is the
 * option's title, `inReplyTo` the Question, addressed to the poll's author only.
 */
export function toAsVote(v: VoteFacts): Create {
  const id = `${v.voterUri}#votes/${v.voteId}/${v.choice}`;
  const to = new URL(v.pollAuthorUri);
  return new Create({
    id: new URL(`${id}/activity`),
    actor: new URL(v.voterUri),
    to,
    object: new Note({ id: new URL(id), name: v.name, attribution: new URL(v.voterUri), replyTarget: new URL(v.questionUri), to }),
  });
}

/** What a deleted status is at its URI. */
export function toAsTombstone(uri: string): Tombstone {
  return new Tombstone({ id: new URL(uri) });
}

/** Delete of a status: a Tombstone, to Public as Mastodon's DeleteSerializer (delivered to the status's audience). */
export function toAsDeleteNote(d: { uri: string; authorUri: string }): Delete {
  return new Delete({ id: new URL(`${d.uri}#delete`), actor: new URL(d.authorUri), to: PUBLIC_COLLECTION, object: toAsTombstone(d.uri) });
}

/** A reblog, as its Announce. */
export interface AnnounceFacts {
  /** The reblog's uri (the Announce's id). */
  uri: string;
  /** The reblog's id (Undo ids are made from it). */
  id: string;
  actorUri: string;
  followersUri: string;
  visibility: string;
  objectUri: string;
  objectAuthorUri: string;
  published: Date;
}

export function toAsAnnounce(a: AnnounceFacts): Announce {
  const { to, cc } = statusAddressing({ visibility: a.visibility, followersUri: a.followersUri, mentionUris: [], reblogOfAuthorUri: a.objectAuthorUri });
  return new Announce({ id: new URL(a.uri), actor: new URL(a.actorUri), published: toInstant(a.published), tos: to, ccs: cc, object: new URL(a.objectUri) });
}

/** Undo(Announce), as Mastodon's UndoAnnounceSerializer names and addresses it. */
export function toAsUndoAnnounce(a: AnnounceFacts): Undo {
  return new Undo({ id: new URL(`${a.actorUri}#announces/${a.id}/undo`), actor: new URL(a.actorUri), to: PUBLIC_COLLECTION, object: toAsAnnounce(a) });
}

/** A favourite, as its Like (id as Mastodon's LikeSerializer). */
export function toAsLike(l: { favouriteId: string; actorUri: string; objectUri: string }): Like {
  return new Like({ id: new URL(`${l.actorUri}#likes/${l.favouriteId}`), actor: new URL(l.actorUri), object: new URL(l.objectUri) });
}

export function toAsUndoLike(l: { favouriteId: string; actorUri: string; objectUri: string }): Undo {
  return new Undo({ id: new URL(`${l.actorUri}#likes/${l.favouriteId}/undo`), actor: new URL(l.actorUri), object: toAsLike(l) });
}
