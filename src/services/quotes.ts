/**
 * Quote posts (Mastodon 4.5, FEP-044f): what a local quote may quote, the quoted author's
 * revocation and policy change, and the answers of other servers (QuoteRequest, its Accept or
 * Reject, the Delete of an authorization). A quote's row (`quotes`) is written with its status by
 * the status writer (status-writer.ts insertQuote); state changes here are one transaction each,
 * moving `status_stats.quotes_count` of the quoted post and recording `quote.accepted`,
 * `quote.revoked` or `quote.refused` for effects (federate: Accept, Reject, Delete of the
 * QuoteAuthorization, the quoting Note's Update; notifications: `quote`).
 *
 * States are Mastodon's: pending (asked, not answered), accepted, rejected (refused before any
 * acceptance), revoked (taken back after). `deleted` and `unauthorized` are computed when rendered.
 */
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import type { Sql } from '../db/sql.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import { escapeHtml } from '../lib/html.ts';
import { effectivePolicy, isQuotePolicy, quoteDecision, type QuotePolicy } from '../lib/quote-policy.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { visibleSql } from './reads/statuses.ts';
import { bumpStatusStats, localApprovalUri, type NewQuote } from './status-writer.ts';

/** Mastodon's answer when a status may not be quoted, or is not there (statuses.errors.quoted_status_not_found). */
export const QUOTED_NOT_FOUND = 'The post you are trying to quote does not appear to exist.';

/** The status a local author quotes, checked: visible to them, quotable by its policy. */
export interface QuotedStatus {
  id: string;
  accountId: string;
  visibility: string;
  uri: string;
  url: string | null;
  authorUri: string;
  local: boolean;
}

/**
 * The status `id` as `accountId` may quote it (a reblog: the post it reblogs), or Mastodon's 404:
 * not there, not visible, or refused by its policy (StatusPolicy#quote?: the author quotes their
 * own posts but direct ones; others need the policy to allow them).
 */
export async function quotableStatus(services: Services, accountId: string, id: string): Promise<QuotedStatus> {
  if (!/^\d{1,20}$/.test(id)) throw notFound(QUOTED_NOT_FOUND);
  const [row] = await services.db.sql.query<{
    id: string; account_id: string; visibility: string; uri: string; url: string | null; quote_policy: string | null;
    author_uri: string; local: boolean; follows: boolean;
  }>(
    `select o.id::text, o.account_id::text, o.visibility, o.uri, o.url,
            -- A local status from before quote policies: public, as Mastodon's default.
            coalesce(o.quote_policy, case when o.local then 'public' end) as quote_policy, a.uri as author_uri, a.domain is null as local,
            exists (select 1 from follows f where f.account_id = $2 and f.target_account_id = o.account_id and f.state = 'accepted') as follows
       from statuses s join statuses o on o.id = coalesce(s.reblog_of_id, s.id) join accounts a on a.id = o.account_id
      where s.id = $1 and ${visibleSql('s', '$2::bigint')} and ${visibleSql('o', '$2::bigint')}`,
    [id, accountId],
  );
  if (!row) throw notFound(QUOTED_NOT_FOUND);
  const decision = quoteDecision({ policy: row.quote_policy, visibility: row.visibility, own: row.account_id === accountId, follows: row.follows, known: true });
  if (decision === 'denied') throw notFound(QUOTED_NOT_FOUND);
  return { id: row.id, accountId: row.account_id, visibility: row.visibility, uri: row.uri, url: row.url, authorUri: row.author_uri, local: row.local };
}

/** The quote a local status makes of `q`: accepted at once for a local post (the policy allowed it), pending for a remote one (a QuoteRequest goes). */
export function localQuote(q: QuotedStatus): NewQuote {
  return {
    quotedStatusId: q.id,
    quotedAccountId: q.accountId,
    quotedLocal: q.local,
    quotedAuthorUri: q.authorUri,
    quotedUri: q.uri,
    state: q.local ? 'accepted' : 'pending',
    legacy: false,
    approvalUri: null,
  };
}

/**
 * The content with Mastodon's fallback link prepended (`<p class="quote-inline">RE: …</p>`, for
 * servers and apps without quotes), unless the text links the quoted post already.
 */
export function withQuoteFallback(content: string, text: string, q: QuotedStatus): string {
  const link = q.url ?? q.uri;
  if (text.includes(link) || text.includes(q.uri)) return content;
  const safe = escapeHtml(link);
  return `<p class="quote-inline">RE: <a href="${safe}">${safe}</a></p>${content}`;
}

/** The policy a new status gets: the one asked for (checked into `v`), else the author's default; nobody unless public or unlisted. */
export function newStatusPolicy(v: Validation, asked: string | undefined, settings: unknown, visibility: string): QuotePolicy {
  let policy: QuotePolicy = 'public';
  const chosen = (settings as Record<string, unknown> | null)?.['posting:default:quote_policy'];
  if (isQuotePolicy(chosen)) policy = chosen;
  if (asked !== undefined && asked !== '') {
    if (isQuotePolicy(asked)) policy = asked;
    else v.add('quote_approval_policy', 'ERR_INCLUSION', 'is not included in the list');
  }
  return effectivePolicy(policy, visibility);
}

interface QuoteRow {
  id: string;
  status_id: string;
  account_id: string;
  quoted_status_id: string | null;
  quoted_account_id: string | null;
  state: string;
  local: boolean;
  quoted_local: boolean;
  quoted_author_uri: string | null;
}

const QUOTE_ROW = `q.id::text, q.status_id::text, q.account_id::text, q.quoted_status_id::text, q.quoted_account_id::text, q.state,
  s.local, coalesce(qa.domain is null, false) as quoted_local, qa.uri as quoted_author_uri`;
const QUOTE_FROM = `quotes q join statuses s on s.id = q.status_id left join accounts qa on qa.id = q.quoted_account_id`;

/** Moves a quote to `state`, with the counter and its fact (accepted and revoked ones). */
async function moveQuote(services: Services, sql: Sql, q: QuoteRow, state: 'accepted' | 'rejected' | 'revoked', origin: Origin, set: { approvalUri?: string | null; activityUri?: string | null } = {}): Promise<void> {
  await sql.query(
    `update quotes set state = $2, approval_uri = coalesce($3, approval_uri), activity_uri = coalesce($4, activity_uri), updated_at = $5 where id = $1`,
    [q.id, state, set.approvalUri ?? null, set.activityUri ?? null, services.clock.now()],
  );
  if (!q.quoted_status_id || !q.quoted_account_id) return;
  if (state === 'accepted' && q.state !== 'accepted') await bumpStatusStats(sql, q.quoted_status_id, 'quotes_count', 1);
  if (state !== 'accepted' && q.state === 'accepted') await bumpStatusStats(sql, q.quoted_status_id, 'quotes_count', -1);
  if (state === 'rejected') return;
  await recordEvent(services, sql, {
    actorKind: 'status',
    actorId: q.status_id,
    origin,
    event: {
      type: state === 'accepted' ? 'quote.accepted' : 'quote.revoked', quoteId: q.id, statusId: q.status_id, accountId: q.account_id,
      quotedStatusId: q.quoted_status_id, quotedAccountId: q.quoted_account_id, local: q.local, quotedLocal: q.quoted_local,
    },
  });
}

/**
 * The quoted author revokes a quote of their post (POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke):
 * an accepted quote becomes revoked, a pending one rejected (Mastodon's Quote#reject!). 404 unless
 * `quotedId` is the author's own and `quotingId` quotes it. Returns the quoting status's id.
 */
export async function revokeQuote(services: Services, accountId: string, quotedId: string, quotingId: string): Promise<string> {
  if (!/^\d{1,20}$/.test(quotedId) || !/^\d{1,20}$/.test(quotingId)) throw notFound();
  return services.db.sql.transaction(async (sql) => {
    const [q] = await sql.query<QuoteRow>(
      `select ${QUOTE_ROW} from ${QUOTE_FROM}
         join statuses o on o.id = q.quoted_status_id and o.account_id = $3 and o.deleted_at is null
        where q.quoted_status_id = $1 and q.status_id = $2 and s.deleted_at is null for update of q`,
      [quotedId, quotingId, accountId],
    );
    if (!q) throw notFound();
    if (q.state === 'accepted') await moveQuote(services, sql, q, 'revoked', 'client');
    else if (q.state === 'pending') await moveQuote(services, sql, q, 'rejected', 'client');
    return q.status_id;
  });
}

/** A quote_approval_policy parameter, or Mastodon's 422. */
export function checkQuotePolicy(asked: string | undefined): asserts asked is QuotePolicy {
  if (!isQuotePolicy(asked)) {
    throw new RoostError(422, 'Validation failed: Quote approval policy is not included in the list', {
      details: { quote_approval_policy: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] },
    });
  }
}

/**
 * PUT /api/v1/statuses/:id/interaction_policy: who may quote the author's own status from now on
 * (past quotes stay); nobody for a private or direct one. Returns the status id.
 */
export async function setQuotePolicy(services: Services, accountId: string, statusId: string, asked: string | undefined): Promise<string> {
  if (!/^\d{1,20}$/.test(statusId)) throw notFound();
  const [s] = await services.db.sql.query<{ visibility: string }>(
    `select visibility from statuses where id = $1 and account_id = $2 and deleted_at is null and reblog_of_id is null`,
    [statusId, accountId],
  );
  if (!s) throw notFound();
  checkQuotePolicy(asked);
  const policy = effectivePolicy(asked, s.visibility);
  await services.db.sql.transaction(async (sql) => {
    await sql.query(`update statuses set quote_policy = $3, updated_at = $4 where id = $1 and account_id = $2`, [
      statusId, accountId, policy, services.clock.now(),
    ]);
    // Other servers hear of it by an Update of the Note (its interactionPolicy).
    await recordEvent(services, sql, { actorKind: 'status', actorId: statusId, origin: 'client', event: { type: 'status.quote_policy_changed', statusId, accountId } });
  });
  return statusId;
}

/**
 * A remote QuoteRequest for a local post (Mastodon's ActivityPub::Activity::QuoteRequest):
 * `requester` asks to quote `quotedUri` with its status `instrument` (stored already by the
 * caller, null when it could not be). Allowed by the policy (quoteDecision): the quote is accepted
 * with Roost's stamp, and `quote.accepted` sends the Accept; refused: `quote.refused` sends a Reject.
 */
export async function receiveQuoteRequest(
  services: Services,
  requester: Account,
  r: { activityUri: string; quotedUri: string; instrumentUri: string; instrumentStatusId: string | null },
): Promise<'accepted' | 'refused' | 'ignored'> {
  return services.db.sql.transaction(async (sql) => {
    const [quoted] = await sql.query<{ id: string; account_id: string; visibility: string; quote_policy: string | null; author_uri: string; follows: boolean; blocked: boolean }>(
      `select s.id::text, s.account_id::text, s.visibility, coalesce(s.quote_policy, 'public') as quote_policy, a.uri as author_uri,
              exists (select 1 from follows f where f.account_id = $2 and f.target_account_id = s.account_id and f.state = 'accepted') as follows,
              exists (select 1 from blocks b where b.account_id = s.account_id and b.target_account_id = $2) as blocked
         from statuses s join accounts a on a.id = s.account_id
        where s.uri = $1 and s.local and s.deleted_at is null and s.reblog_of_id is null and a.suspended_at is null`,
      [r.quotedUri, requester.id],
    );
    if (!quoted) return 'ignored';
    // As Mastodon: an account the author blocks is always refused.
    const decision = quoted.blocked ? 'denied' : quoteDecision({ policy: quoted.quote_policy, visibility: quoted.visibility, own: false, follows: quoted.follows, known: true });
    const [q] = r.instrumentStatusId
      ? await sql.query<QuoteRow>(
          `select ${QUOTE_ROW} from ${QUOTE_FROM} where q.status_id = $1 and q.quoted_status_id = $2 and q.account_id = $3 for update of q`,
          [r.instrumentStatusId, quoted.id, requester.id],
        )
      : [];
    if (decision === 'denied' || !q) {
      if (q && q.state !== 'rejected' && q.state !== 'revoked') await moveQuote(services, sql, q, q.state === 'accepted' ? 'revoked' : 'rejected', 'federation');
      await recordEvent(services, sql, {
        actorKind: 'status',
        actorId: quoted.id,
        origin: 'federation',
        event: { type: 'quote.refused', quotedStatusId: quoted.id, quotedAccountId: quoted.account_id, requesterId: requester.id, activityUri: r.activityUri, instrumentUri: r.instrumentUri },
      });
      return 'refused';
    }
    if (q.state === 'accepted') {
      // Asked again: the Accept goes again (its id is the quote's, so peers take it once).
      await sql.query(`update quotes set activity_uri = $2 where id = $1`, [q.id, r.activityUri]);
      await recordEvent(services, sql, {
        actorKind: 'status', actorId: q.status_id, origin: 'federation',
        event: { type: 'quote.accepted', quoteId: q.id, statusId: q.status_id, accountId: q.account_id, quotedStatusId: quoted.id, quotedAccountId: quoted.account_id, local: false, quotedLocal: true },
      });
      return 'accepted';
    }
    await moveQuote(services, sql, q, 'accepted', 'federation', { approvalUri: localApprovalUri(quoted.author_uri, q.id), activityUri: r.activityUri });
    return 'accepted';
  });
}

/** The Accept of a QuoteRequest of ours (`activityUri`) by the quoted author `by`, with its stamp `result` (on their host). */
export async function remoteQuoteAccepted(services: Services, by: Account, activityUri: string, result: string | null): Promise<boolean> {
  if (!result || new URL(result).host !== new URL(by.uri).host) return false;
  return services.db.sql.transaction(async (sql) => {
    const [q] = await sql.query<QuoteRow>(
      `select ${QUOTE_ROW} from ${QUOTE_FROM} where q.activity_uri = $1 and q.quoted_account_id = $2 and s.local and s.deleted_at is null for update of q`,
      [activityUri, by.id],
    );
    if (!q) return false;
    if (q.state === 'pending') await moveQuote(services, sql, q, 'accepted', 'federation', { approvalUri: result });
    return true;
  });
}

/** The Reject of a QuoteRequest of ours: rejected (revoked if it had been accepted). */
export async function remoteQuoteRejected(services: Services, by: Account, activityUri: string): Promise<boolean> {
  return services.db.sql.transaction(async (sql) => {
    const [q] = await sql.query<QuoteRow>(
      `select ${QUOTE_ROW} from ${QUOTE_FROM} where q.activity_uri = $1 and q.quoted_account_id = $2 for update of q`,
      [activityUri, by.id],
    );
    if (!q) return false;
    if (q.state === 'pending' || q.state === 'accepted') await moveQuote(services, sql, q, q.state === 'accepted' ? 'revoked' : 'rejected', 'federation');
    return true;
  });
}

/** A Delete of a QuoteAuthorization by the quoted author `by`: the quotes it stamped are revoked. Returns whether any was. */
export async function remoteAuthorizationDeleted(services: Services, by: Account, approvalUri: string): Promise<boolean> {
  return services.db.sql.transaction(async (sql) => {
    const rows = await sql.query<QuoteRow>(
      `select ${QUOTE_ROW} from ${QUOTE_FROM} where q.approval_uri = $1 and q.quoted_account_id = $2 for update of q`,
      [approvalUri, by.id],
    );
    for (const q of rows) if (q.state === 'accepted' || q.state === 'pending') await moveQuote(services, sql, q, q.state === 'accepted' ? 'revoked' : 'rejected', 'federation');
    return rows.length > 0;
  });
}

/** A remote status's policy as its latest Note states it (an Update without an edit may change only that). */
export async function setRemoteQuotePolicy(services: Services, statusId: string, policy: string): Promise<void> {
  await services.db.sql.query(`update statuses set quote_policy = $2 where id = $1 and not local and quote_policy is distinct from $2`, [statusId, policy]);
}

/**
 * A remote quote now stamped (an Update of the quoting Note naming an authorization that checked
 * out, federation/quotes.ts): pending becomes accepted with that stamp.
 */
export async function remoteQuoteVerified(services: Services, statusId: string, approvalUri: string): Promise<void> {
  await services.db.sql.transaction(async (sql) => {
    const [q] = await sql.query<QuoteRow>(`select ${QUOTE_ROW} from ${QUOTE_FROM} where q.status_id = $1 for update of q`, [statusId]);
    if (q && q.state === 'pending') await moveQuote(services, sql, q, 'accepted', 'federation', { approvalUri });
  });
}

/** The quote a remote status makes (by status id), for the inbox's checks. */
export async function quoteOfStatus(services: Services, statusId: string): Promise<{ id: string; state: string; quotedUri: string; quotedStatusId: string | null; approvalUri: string | null } | null> {
  const [q] = await services.db.sql.query<{ id: string; state: string; quoted_uri: string; quoted_status_id: string | null; approval_uri: string | null }>(
    `select id::text, state, quoted_uri, quoted_status_id::text, approval_uri from quotes where status_id = $1`,
    [statusId],
  );
  return q ? { id: q.id, state: q.state, quotedUri: q.quoted_uri, quotedStatusId: q.quoted_status_id, approvalUri: q.approval_uri } : null;
}

/** The authorization Roost gave (its stamp at /users/:username/quote_authorizations/:id): live only while the quote is accepted. */
export async function localAuthorization(services: Services, username: string, quoteId: string): Promise<{ id: string; authorUri: string; quotingUri: string; quotedUri: string } | null> {
  if (!/^\d{1,20}$/.test(quoteId)) return null;
  const [row] = await services.db.sql.query<{ author_uri: string; quoting_uri: string; quoted_uri: string; approval_uri: string | null }>(
    `select a.uri as author_uri, s.uri as quoting_uri, o.uri as quoted_uri, q.approval_uri
       from quotes q join statuses s on s.id = q.status_id join statuses o on o.id = q.quoted_status_id join accounts a on a.id = o.account_id
      where q.id = $1 and q.state = 'accepted' and a.domain is null and a.username = $2 and s.deleted_at is null and o.deleted_at is null`,
    [quoteId, username],
  );
  if (!row || row.approval_uri !== localApprovalUri(row.author_uri, quoteId)) return null;
  return { id: row.approval_uri, authorUri: row.author_uri, quotingUri: row.quoting_uri, quotedUri: row.quoted_uri };
}
