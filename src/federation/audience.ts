/**
 * Who receives what a local account sends: the one recipient expansion, as Mastodon's
 * StatusReachFinder has it. Used by effects/dispatch.ts (which activities go where), the delivery
 * job (./delivery.ts: followers into inboxes) and the followers dispatcher (./index.ts).
 *
 *   followers    the remote accounts that follow the sender (accepted, not suspended), expanded
 *                into inboxes by the delivery job when it runs: a shared inbox once for all the
 *                actors behind it ({@link inboxesOf});
 *   a status     its followers unless it is direct or limited, and one by one the remote
 *                accounts the status mentions, the remote author it replies to (public and
 *                unlisted replies), those who reblogged it and those who voted on its poll, when
 *                the activity asks for them — minus whoever follows the author, who gets it with
 *                the followers ({@link statusReach}, at most one statement).
 *
 * A recipient is a remote account that is not suspended ({@link RemoteRecipientRow}).
 */
import type { Sql } from '../db/sql.ts';

/** A remote account as a recipient: its actor URI and inboxes. */
export interface RemoteRecipientRow {
  id: string;
  uri: string;
  inbox_url: string | null;
  shared_inbox_url: string | null;
}

/** A Fedify recipient for a remote account row. */
export function recipientOfRow(r: RemoteRecipientRow) {
  return {
    id: new URL(r.uri),
    inboxId: r.inbox_url ? new URL(r.inbox_url) : null,
    endpoints: r.shared_inbox_url ? { sharedInbox: new URL(r.shared_inbox_url) } : null,
  };
}

/** An inbox to POST to and the actors it stands for. */
export interface InboxTarget {
  /** Actor URIs this inbox stands for. */
  actors: string[];
  /** A shared inbox (its 410 says nothing about one actor). */
  shared: boolean;
}

/**
 * inbox → the actors it stands for: each actor's shared inbox when `preferShared` and it has one
 * (so a shared inbox once, whatever the number of its actors), its own inbox otherwise; an actor
 * with neither is left out.
 */
export function inboxesOf(
  recipients: Iterable<{ uri: string; inbox_url: string | null; shared_inbox_url: string | null }>,
  preferShared: boolean,
): Record<string, InboxTarget> {
  const out: Record<string, InboxTarget> = {};
  for (const r of recipients) {
    const shared = preferShared ? r.shared_inbox_url : null;
    const inbox = shared ?? r.inbox_url;
    if (!inbox) continue;
    const t = (out[inbox] ??= { actors: [], shared: !!shared });
    t.actors.push(r.uri);
  }
  return out;
}

/** SQL: the recipient columns of `accounts a`, and `a` being a recipient (remote, not suspended). */
const RECIPIENT_COLUMNS = `a.id::text, a.uri, a.inbox_url, a.shared_inbox_url`;
const REMOTE = `a.domain is not null and a.suspended_at is null`;

/** The remote accepted followers of the local account `accountId`. */
export async function remoteFollowers(sql: Sql, accountId: string): Promise<RemoteRecipientRow[]> {
  return sql.query<RemoteRecipientRow>(
    `select ${RECIPIENT_COLUMNS} from follows f join accounts a on a.id = f.account_id
      where f.target_account_id = $1 and f.state = 'accepted' and ${REMOTE}`,
    [accountId],
  );
}

/** The account `accountId` as a recipient (null when it is local, suspended or gone). */
export async function remoteAccount(sql: Sql, accountId: string): Promise<RemoteRecipientRow | null> {
  const [row] = await sql.query<RemoteRecipientRow>(`select ${RECIPIENT_COLUMNS} from accounts a where a.id = $1 and ${REMOTE}`, [accountId]);
  return row ?? null;
}

/** The status an activity is about, as its reach needs it. */
export interface ReachStatus {
  id: string;
  accountId: string;
  inReplyToAccountId: string | null;
  /** The remote accounts it mentions (silent mentions too), not suspended. */
  mentioned: readonly RemoteRecipientRow[];
  note: { visibility: string };
}

/** Who else an activity about a status goes to, besides its followers and the mentioned. */
export interface ReachOptions {
  /** The author replied to, when the status is a public or unlisted reply (Create, Update, Delete). */
  repliedTo?: boolean;
  /** More accounts, by id (the reblogged original's author for an Announce). */
  accounts?: readonly string[];
  /** Those who reblogged the status: `live` reblogs only, or `all` (a deletion takes the reblogs with it). */
  rebloggers?: 'live' | 'all';
  /** The poll whose voters get it (an Update(Question)). */
  pollVoters?: string;
}

export interface StatusReach {
  /** Whether the author's followers get it (expanded into inboxes by the delivery job). */
  followers: boolean;
  /** The remote accounts addressed one by one: the mentioned and the others asked for, minus followers. */
  direct: RemoteRecipientRow[];
}

/**
 * The reach of an activity about the local status `s`: its followers unless it is direct or
 * limited, and the recipients `also` asks for besides the mentioned, each once, minus those the
 * followers already reach. One statement; none when the mentioned (loaded with the status) are
 * all there is to address and no follower needs leaving out.
 */
export async function statusReach(sql: Sql, s: ReachStatus, also: ReachOptions = {}): Promise<StatusReach> {
  const visibility = s.note.visibility;
  const followers = visibility === 'public' || visibility === 'unlisted' || visibility === 'private';
  const extra = [...(also.accounts ?? [])];
  if (also.repliedTo && s.inReplyToAccountId && (visibility === 'public' || visibility === 'unlisted')) extra.push(s.inReplyToAccountId);
  if (extra.length === 0 && !also.rebloggers && !also.pollVoters && (!followers || s.mentioned.length === 0)) {
    return { followers, direct: followers ? [] : [...new Map(s.mentioned.map((m) => [m.id, m])).values()] };
  }
  const ids = [...s.mentioned.map((m) => m.id), ...extra];
  const direct = await sql.query<RemoteRecipientRow>(
    `with c (id) as (
       select unnest($1::bigint[])
       union select r.account_id from statuses r where $2::text is not null and r.reblog_of_id = $3::bigint and ($2::text = 'all' or r.deleted_at is null)
       union select v.account_id from poll_votes v where $4::bigint is not null and v.poll_id = $4::bigint
     )
     select ${RECIPIENT_COLUMNS} from c join accounts a on a.id = c.id
      where ${REMOTE}
        and not ($5::boolean and exists (select 1 from follows f where f.account_id = a.id and f.target_account_id = $6::bigint and f.state = 'accepted'))
      order by coalesce(array_position($1::bigint[], a.id), cardinality($1::bigint[]) + 1), a.id`,
    [ids, also.rebloggers ?? null, s.id, also.pollVoters ?? null, followers, s.accountId],
  );
  return { followers, direct };
}
