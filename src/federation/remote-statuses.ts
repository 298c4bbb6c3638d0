/**
 * Remote statuses from ActivityPub objects: a Create's Note, a reply's missing parent, an
 * Announce's object. convert/from-as.ts reads and sanitises the Note; this file resolves what it
 * references (author, parent, mentioned accounts) to rows — fetching only within
 * REMOTE_FETCH_LIMITS (./loaders.ts) through the bounded loaders — and hands the result to the
 * one service function, services/remote-statuses.ts persistRemoteStatus.
 */
import type { Context } from '@fedify/fedify';
import { isActor, Question } from '@fedify/vocab';
import type { Services } from '../context.ts';
import { AccountSchema, type Account } from '../db/entities/index.ts';
import { persistRemoteStatus, statusByUri, updateRemoteStatus, type RemoteStatusInput } from '../services/remote-statuses.ts';
import { setRemoteQuotePolicy } from '../services/quotes.ts';
import { isPublicCollection, isStatusObject, noteFields, persistAccount, questionPoll, untrustedCounts, visibilityFromAudience, type NoteFields } from './convert/from-as.ts';
import { localAccountFromUri } from './inbox/resolve.ts';
import { REMOTE_FETCH_LIMITS } from './loaders.ts';
import { persistRemoteEmojis } from '../services/custom-emojis.ts';
import { lookupObjectSafely } from './lookup.ts';
import { remoteQuotePolicy, resolveQuote, settleQuoteOnUpdate } from './quotes.ts';

/** What one incoming activity has spent of REMOTE_FETCH_LIMITS.fetches (shared down a thread). */
export interface FetchBudget {
  fetches: number;
}

export function newFetchBudget(): FetchBudget {
  return { fetches: 0 };
}

export interface NoteOptions {
  /** How many ancestors above the status that arrived this one is (0: the status itself). */
  depth: number;
  budget: FetchBudget;
  /** The local account whose own inbox the activity came to (it may see the status: a silent mention). */
  deliveredTo?: Account | null;
  /**
   * Take the status only if it concerns this server (a Create arriving at the shared inbox), as
   * Mastodon's related_to_local_activity?: see relatedToLocal.
   */
  requireLocalRelation?: boolean;
  /** The activity's audience, for objects without one. */
  fallback?: { to: URL[]; cc: URL[] };
  /** The activity as received (JSON), for what Fedify's vocabulary drops (an attachment's blurhash, focalPoint). */
  raw?: unknown;
}

type StatusObject = Parameters<typeof noteFields>[0];

/** At most this many unknown mentioned accounts are fetched for one status (within the budget too). */
const MAX_MENTIONS_FETCHED = 4;

/** Whether `note` may be stored as `author`'s: attributed to it, with an id on its host. */
export function ownedBy(note: StatusObject, author: Account): boolean {
  if (!note.id || note.id.host !== new URL(author.uri).host) return false;
  const attributed = note.attributionIds;
  return attributed.length > 0 && attributed[0]!.href === author.uri;
}

/** The accounts the mentions and the audience name, known ones only (one statement). */
async function resolveAccounts(services: Services, uris: string[]): Promise<Map<string, string>> {
  const byUri = new Map<string, string>();
  if (uris.length === 0) return byUri;
  const rows = await services.db.sql.query<{ id: string; uri: string; url: string | null }>(
    `select id::text, uri, url from accounts where (uri = any($1::text[]) or url = any($1::text[])) and suspended_at is null`,
    [uris],
  );
  for (const r of rows) {
    byUri.set(r.uri, r.id);
    if (r.url && !byUri.has(r.url)) byUri.set(r.url, r.id);
  }
  return byUri;
}

/**
 * Mentions as Mastodon's Create makes them: Mention tags of known accounts, then every known
 * account in the audience (and the local inbox owner) not tagged as a silent mention; a direct
 * status with silent mentions is `limited`.
 */
async function mentionsOf(services: Services, f: NoteFields, author: Account, deliveredTo: Account | null | undefined) {
  const audience = [...f.to, ...f.cc].filter((u) => !isPublicCollection(u) && u !== author.followersUrl);
  const known = await resolveAccounts(services, [...new Set([...f.mentionHrefs, ...audience])]);
  const mentions = new Map<string, { accountId: string; silent: boolean }>();
  for (const href of f.mentionHrefs) {
    const id = known.get(href);
    if (id) mentions.set(id, { accountId: id, silent: false });
  }
  const silent = audience.flatMap((u) => (known.has(u) ? [known.get(u)!] : []));
  if (deliveredTo) silent.push(deliveredTo.id);
  for (const id of silent) if (!mentions.has(id)) mentions.set(id, { accountId: id, silent: true });
  let visibility = visibilityFromAudience(f.to, f.cc, author.followersUrl ?? null);
  if (visibility === 'direct' && [...mentions.values()].some((m) => m.silent)) visibility = 'limited';
  const unknown = f.mentionHrefs.filter((href) => !known.has(href));
  return { visibility, mentions: [...mentions.values()], unknown };
}

/**
 * Stores `note` as a status of `author` (already resolved: the signed actor of a Create, or the
 * fetched author of a parent). Refused (null): an object not attributed to the author or whose id
 * is on another host. A status known by its uri is not stored again. A missing parent is fetched
 * within REMOTE_FETCH_LIMITS. Returns the status id.
 */
export async function persistNote(services: Services, ctx: Context<void>, note: StatusObject, author: Account, o: NoteOptions): Promise<string | null> {
  if (!ownedBy(note, author)) return null;
  const known = await statusByUri(services, note.id!.href);
  if (known) return known.accountId === author.id && !known.deleted ? known.id : null;
  const f = await noteFields(note, {
    now: services.clock.now(),
    maxAttachments: services.config.limits.statuses.maxMediaAttachments,
    fallback: o.fallback,
    raw: o.raw,
  });
  const { visibility, mentions, unknown } = await mentionsOf(services, f, author, o.deliveredTo);
  // A quote of a local post concerns this server too.
  const quotesLocal = !!f.quote && new URL(f.quote.uri).origin === new URL(services.config.publicUrl).origin;
  if (o.requireLocalRelation && !o.deliveredTo && !quotesLocal && !(await relatedToLocal(services, author, f, mentions))) return null;
  // Mentioned accounts not known yet: fetched, a few, within the activity's budget.
  for (const href of unknown.slice(0, MAX_MENTIONS_FETCHED)) {
    const account = await accountFor(services, ctx, new URL(href), o.budget).catch(() => null);
    if (account && !mentions.some((m) => m.accountId === account.id)) mentions.push({ accountId: account.id, silent: false });
  }
  const parentId = f.inReplyToUri ? await resolveParent(services, ctx, new URL(f.inReplyToUri), o) : null;
  // The post it quotes, found or fetched within the same bounds, and the quote's state (./quotes.ts).
  const quote = await resolveQuote(services, ctx, f, author, o);
  // A Question is a status with a poll (one that cannot be read is stored without it).
  const poll = note instanceof Question ? await questionPoll(note) : null;
  if (author.domain) await persistRemoteEmojis(services, author.domain, f.emojis);
  const input: RemoteStatusInput = {
    uri: f.uri,
    url: f.url,
    accountId: author.id,
    content: f.content,
    spoilerText: f.spoilerText,
    sensitive: f.sensitive,
    language: f.language,
    visibility,
    inReplyToId: parentId,
    mentions,
    tags: f.tags,
    createdAt: f.published,
    editedAt: f.updated,
    attachments: f.attachments,
    poll,
    untrusted: await untrustedCounts(note),
    quotePolicy: remoteQuotePolicy(f.quoteApprovals, author),
    quote,
  };
  return (await persistRemoteStatus(services, input)).id;
}

/**
 * Whether a status concerns this server, as Mastodon's Create#related_to_local_activity?: its
 * author has a local follower, it mentions (or addresses) a local account, or it replies to a
 * known status that is local or whose author has a local follower. Nothing is fetched to decide.
 * (Delivered to a local account's own inbox counts too: the caller checks that.)
 */
async function relatedToLocal(services: Services, author: Account, f: NoteFields, mentions: { accountId: string }[]): Promise<boolean> {
  const [row] = await services.db.sql.query<{ related: boolean }>(
    `select exists (select 1 from follows fo join accounts l on l.id = fo.account_id
                     where fo.target_account_id = $1 and fo.state = 'accepted' and l.domain is null)
         or exists (select 1 from accounts m where m.id = any($2::bigint[]) and m.domain is null)
         or exists (select 1 from statuses p join accounts pa on pa.id = p.account_id
                     where p.uri = $3 and p.deleted_at is null
                       and (pa.domain is null or exists (
                             select 1 from follows pf join accounts pl on pl.id = pf.account_id
                              where pf.target_account_id = pa.id and pf.state = 'accepted' and pl.domain is null))) as related`,
    [author.id, mentions.map((m) => m.accountId), f.inReplyToUri],
  );
  return row?.related ?? false;
}

/** The parent of a reply: known, or fetched when the depth and the budget allow. */
async function resolveParent(services: Services, ctx: Context<void>, uri: URL, o: NoteOptions): Promise<string | null> {
  const known = await statusByUri(services, uri.href);
  if (known) return known.deleted ? null : known.id;
  if (o.depth >= REMOTE_FETCH_LIMITS.depth) return null;
  return fetchRemoteStatus(services, ctx, uri, { depth: o.depth + 1, budget: o.budget });
}

/** An account by its actor URI: known, local, or fetched within the budget. */
async function accountFor(services: Services, ctx: Context<void>, uri: URL, budget: FetchBudget): Promise<Account | null> {
  const known = await services.db.em().findOne(AccountSchema, { uri: uri.href });
  if (known) return known.suspendedAt ? null : known;
  if (uri.origin === new URL(services.config.publicUrl).origin) return localAccountFromUri(services, ctx, uri);
  if (budget.fetches >= REMOTE_FETCH_LIMITS.fetches) return null;
  budget.fetches++;
  const actor = await lookupObjectSafely(uri, ctx.documentLoader, ctx.contextLoader);
  if (!actor || !isActor(actor) || actor.id?.href !== uri.href) return null;
  return persistAccount(services, actor).catch(() => null);
}

/**
 * A status by its URI: known (ours or stored), or fetched from its server and stored (a reply's
 * parent, an Announce's object), within the budget. Only a Note or Article whose id is the URI
 * and whose author lives on the same host is taken.
 */
export async function fetchRemoteStatus(services: Services, ctx: Context<void>, uri: URL, o: NoteOptions): Promise<string | null> {
  const known = await statusByUri(services, uri.href);
  if (known) return known.deleted ? null : known.id;
  if (uri.origin === new URL(services.config.publicUrl).origin) return null;
  if (o.budget.fetches >= REMOTE_FETCH_LIMITS.fetches) return null;
  o.budget.fetches++;
  const object = await lookupObjectSafely(uri, ctx.documentLoader, ctx.contextLoader);
  return persistFetchedStatus(services, ctx, uri, object, o);
}

/**
 * A status object fetched from `uri` (its document, ./lookup.ts lookupObjectSafely), stored as
 * fetchRemoteStatus stores it: only a Note or Article whose id is the URI and whose author lives
 * on the same host. Returns its id, or null.
 */
export async function persistFetchedStatus(services: Services, ctx: Context<void>, uri: URL, object: unknown, o: NoteOptions): Promise<string | null> {
  if (!isStatusObject(object) || object.id?.href !== uri.href) return null;
  const authorUri = object.attributionIds[0];
  if (!authorUri || authorUri.host !== uri.host) return null;
  const author = await accountFor(services, ctx, authorUri, o.budget);
  if (!author || author.domain === null) return null;
  return persistNote(services, ctx, object, author, o);
}

/** Update(Note) from its author: the new text, spoiler, sensitivity, mentions, tags and attachments (`raw`: the activity as received). */
export async function updateNote(services: Services, ctx: Context<void>, note: StatusObject, author: Account, raw?: unknown): Promise<string | null> {
  if (!ownedBy(note, author)) return null;
  const f = await noteFields(note, {
    now: services.clock.now(),
    maxAttachments: services.config.limits.statuses.maxMediaAttachments,
    raw,
  });
  const { mentions } = await mentionsOf(services, f, author, null);
  if (author.domain) await persistRemoteEmojis(services, author.domain, f.emojis);
  const [known] = await services.db.sql.query<{ id: string; content: string }>(
    `select id::text, content from statuses where uri = $1 and account_id = $2 and not local and deleted_at is null`,
    [f.uri, author.id],
  );
  // A quote's stamp may come with an Update (the quoting post sent again once accepted), and a new policy.
  if (known) await settleQuoteOnUpdate(services, ctx, known.id, f);
  const policy = remoteQuotePolicy(f.quoteApprovals, author);
  if (known && policy) await setRemoteQuotePolicy(services, known.id, policy);
  // An Update that says no edit time and changes nothing is not an edit (Mastodon's implicit update).
  if (known && f.updated === null && known.content === f.content) return known.id;
  return updateRemoteStatus(services, author.id, f.uri, {
    content: f.content,
    spoilerText: f.spoilerText,
    sensitive: f.sensitive,
    language: f.language,
    editedAt: f.updated,
    mentions,
    tags: f.tags,
    attachments: f.attachments,
    untrusted: await untrustedCounts(note),
  });
}
