/**
 * Quote posts on the wire (FEP-044f, as Mastodon 4.5 speaks it): the quote an incoming Note makes,
 * resolved and checked before its status is written (remote-statuses.ts persistNote); the
 * authorization it names, fetched (bounded) and verified as Mastodon's VerifyQuoteService does;
 * an incoming QuoteRequest for a local post; an Update that brings a pending quote its stamp.
 * The state changes themselves are services/quotes.ts's.
 */
import type { Context, InboxContext } from '@fedify/fedify';
import { QuoteAuthorization, type QuoteRequest } from '@fedify/vocab';
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import { quoteOfStatus, receiveQuoteRequest, remoteQuoteVerified } from '../services/quotes.ts';
import type { NewQuote } from '../services/status-writer.ts';
import { statusByUri } from '../services/remote-statuses.ts';
import { isStatusObject, type NoteFields } from './convert/from-as.ts';
import { REMOTE_FETCH_LIMITS } from './loaders.ts';
import { lookupObjectSafely } from './lookup.ts';
import { fetchRemoteStatus, newFetchBudget, persistNote, type FetchBudget } from './remote-statuses.ts';
import { resolveActivityActor } from './inbox/resolve.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

/**
 * A remote status's quote policy from its `canQuote.automaticApproval` (Mastodon keeps public,
 * followers, nobody): Public → public, the author's followers → followers, anything else → nobody;
 * null when the Note states no policy.
 */
export function remoteQuotePolicy(approvals: string[] | null, author: Account): string | null {
  if (approvals === null) return null;
  if (approvals.some((u) => u === PUBLIC || u === 'as:Public' || u === 'Public')) return 'public';
  if (author.followersUrl && approvals.includes(author.followersUrl)) return 'followers';
  return 'nobody';
}

/** The quoted post's row facts (author, locality, whether it mentions `quoter`). */
async function quotedFacts(services: Services, statusId: string, quoter: string | null = null): Promise<{ accountId: string; authorUri: string; local: boolean; uri: string; mentions: boolean } | null> {
  const [row] = await services.db.sql.query<{ account_id: string; author_uri: string; local: boolean; uri: string; mentions: boolean }>(
    `select s.account_id::text, a.uri as author_uri, a.domain is null as local, s.uri,
            exists (select 1 from mentions m where m.status_id = s.id and m.account_id = $2 and not m.silent) as mentions
       from statuses s join accounts a on a.id = s.account_id
      where s.id = $1 and s.deleted_at is null and s.reblog_of_id is null`,
    [statusId, quoter],
  );
  return row ? { accountId: row.account_id, authorUri: row.author_uri, local: row.local, uri: row.uri, mentions: row.mentions } : null;
}

/**
 * The stamp `approvalUri` fetched (one fetch of the budget) and checked as Mastodon's
 * VerifyQuoteService: a QuoteAuthorization at that id, on the quoted author's host, attributed to
 * them, naming the quoting post (`interactingObject`) and the quoted one (`interactionTarget`).
 */
async function verifyAuthorization(
  ctx: Context<void>,
  approvalUri: string,
  facts: { quotingUri: string; quotedUri: string; quotedAuthorUri: string },
  budget: FetchBudget,
): Promise<boolean> {
  if (new URL(approvalUri).host !== new URL(facts.quotedAuthorUri).host) return false;
  if (budget.fetches >= REMOTE_FETCH_LIMITS.fetches) return false;
  budget.fetches++;
  const object = await lookupObjectSafely(new URL(approvalUri), ctx.documentLoader, ctx.contextLoader).catch(() => null);
  return (
    object instanceof QuoteAuthorization &&
    object.id?.href === approvalUri &&
    object.attributionId?.href === facts.quotedAuthorUri &&
    object.interactingObjectId?.href === facts.quotingUri &&
    object.interactionTargetId?.href === facts.quotedUri
  );
}

/**
 * The quote of an incoming Note, before its status is written: the quoted post found (or fetched
 * within the activity's budget and depth), and its state as Mastodon decides it: accepted for a
 * self-quote, a quote of a post that mentions the quoter, or a stamp that checks out (a remote
 * post's), pending otherwise (a local post's is
 * settled by the QuoteRequest that comes with it; a legacy quote without a stamp stays pending,
 * and is shown as no quote at all, as Mastodon shows it).
 */
export async function resolveQuote(
  services: Services,
  ctx: Context<void>,
  f: Pick<NoteFields, 'uri' | 'quote'>,
  author: Account,
  o: { depth: number; budget: FetchBudget },
): Promise<NewQuote | null> {
  const quote = f.quote;
  if (!quote || quote.uri === f.uri) return null;
  const known = await statusByUri(services, quote.uri);
  let quotedId = known ? (known.deleted ? null : (known.reblogOfId ?? known.id)) : null;
  if (!known && o.depth < REMOTE_FETCH_LIMITS.depth) {
    quotedId = await fetchRemoteStatus(services, ctx, new URL(quote.uri), { depth: o.depth + 1, budget: o.budget }).catch(() => null);
  }
  const quoted = quotedId ? await quotedFacts(services, quotedId, author.id) : null;
  const base = { quotedUri: quote.uri, legacy: quote.legacy, quotedAuthorUri: quoted?.authorUri ?? null };
  if (!quoted) return { ...base, quotedStatusId: null, quotedAccountId: null, quotedLocal: false, state: 'pending', approvalUri: quote.authorization };
  const row = { ...base, quotedStatusId: quotedId, quotedAccountId: quoted.accountId, quotedLocal: quoted.local };
  // FEP-044f's rules without a stamp (Mastodon's fast track): a self-quote, a quote of a post that mentions the quoter.
  if (quoted.accountId === author.id || quoted.mentions) return { ...row, state: 'accepted', approvalUri: quote.authorization };
  if (!quoted.local && quote.authorization) {
    const ok = await verifyAuthorization(ctx, quote.authorization, { quotingUri: f.uri, quotedUri: quoted.uri, quotedAuthorUri: quoted.authorUri }, o.budget);
    return { ...row, state: ok ? 'accepted' : 'pending', approvalUri: quote.authorization };
  }
  // A stamp naming a local post is Roost's own: the QuoteRequest decides (never trusted from the Note).
  return { ...row, state: 'pending', approvalUri: quoted.local ? null : quote.authorization };
}

/** An Update of a remote quoting Note: a pending quote that now names a stamp that checks out is accepted. */
export async function settleQuoteOnUpdate(services: Services, ctx: Context<void>, statusId: string, f: Pick<NoteFields, 'uri' | 'quote'>): Promise<void> {
  const authorization = f.quote?.authorization;
  if (!authorization) return;
  const q = await quoteOfStatus(services, statusId);
  if (!q || q.state !== 'pending' || !q.quotedStatusId || q.quotedUri !== f.quote!.uri) return;
  const quoted = await quotedFacts(services, q.quotedStatusId);
  if (!quoted || quoted.local) return;
  const ok = await verifyAuthorization(ctx, authorization, { quotingUri: f.uri, quotedUri: quoted.uri, quotedAuthorUri: quoted.authorUri }, newFetchBudget());
  if (ok) await remoteQuoteVerified(services, statusId, authorization);
}

/**
 * QuoteRequest (FEP-044f) for a local post: the requester's quoting status (inlined, taken when it
 * is theirs, else fetched) is stored, then the policy answers (services/quotes.ts
 * receiveQuoteRequest: Accept with a stamp, or Reject).
 */
export async function onQuoteRequest(services: Services, ctx: InboxContext<void>, request: QuoteRequest): Promise<void> {
  const by = await resolveActivityActor(services, request);
  if (!by || by.domain === null || by.suspendedAt) return;
  const activityUri = request.id?.href;
  const quotedUri = request.objectId?.href;
  const instrumentUri = request.instrumentId?.href;
  if (!activityUri || !quotedUri || !instrumentUri) return;
  if (new URL(activityUri).host !== new URL(by.uri).host || new URL(quotedUri).origin !== new URL(services.config.publicUrl).origin) return;
  const budget = newFetchBudget();
  const inlined = await request.getInstrument({ crossOrigin: 'ignore' }).catch(() => null);
  let statusId: string | null = null;
  if (isStatusObject(inlined) && inlined.id?.href === instrumentUri) {
    statusId = await persistNote(services, ctx, inlined, by, { depth: 0, budget });
  } else {
    statusId = await fetchRemoteStatus(services, ctx, new URL(instrumentUri), { depth: 0, budget });
  }
  await receiveQuoteRequest(services, by, { activityUri, quotedUri, instrumentUri, instrumentStatusId: statusId });
}
