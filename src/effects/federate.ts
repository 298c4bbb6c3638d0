/**
 * The federate consumer of the outbox (declared in src/events/consumers.ts): what a committed fact
 * (`follow.requested`, `account.moved` …) means for other servers. Is a remote party involved?
 * Then build the activity (pure builders in federation/convert/to-as.ts) and queue its delivery
 * (federation/delivery.ts: one job per activity, the priority lane for a few inboxes, the bulk
 * lane for fan-outs).
 *
 * A federation failure never fails the local operation: this consumer is retried on its own
 * (effects/registry.ts). Under that retry it sends nothing twice: the deliveries one fact causes
 * are prepared first and queued together in one statement at the end (all or none), and every
 * activity id is stable (a Move's is its outbox event's). Each case re-reads the rows and acts
 * only if they are still in the state the fact was about (a request withdrawn meanwhile sends no
 * Follow). effects/ never calls into services.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account, type Follow as FollowRow } from '../db/entities/index.ts';
import type { RoostFederation } from '../federation/index.ts';
import type { Activity } from '@fedify/vocab';
import { localActorDocument } from '../federation/actor.ts';
import { INSTANCE_ACTOR, instanceActorUri } from '../federation/instance-actor.ts';
import { enqueueDeliveries, prepareDelivery, type Recipients, type SendOptions } from '../federation/delivery.ts';
import type { EnqueueSpec } from '../jobs/queue.ts';
import {
  toAsAccept,
  toAsBlock,
  toAsFollow,
  toAsMove,
  toAsDeleteActor,
  toAsReject,
  toAsRejectActivity,
  toAsUndoBlock,
  toAsUndoFollow,
  toAsUpdateActor,
  toAsCreateNote,
  toAsUpdateNote,
  toAsDeleteNote,
  toAsAnnounce,
  toAsUndoAnnounce,
  toAsLike,
  toAsUndoLike,
  toAsUpdatePoll,
  toAsVote,
  toAsFlag,
  toAsAdd,
  toAsRemove,
  toAsQuoteRequest,
  toAsAcceptQuote,
  toAsRejectQuote,
  toAsDeleteAuthorization,
  type FollowEnds,
} from '../federation/convert/to-as.ts';
import { loadVoteAs, localPollStatusId } from '../federation/polls.ts';
import { announceFacts, loadStatusAs, loadStatusesAs, type StatusAsRow } from '../federation/statuses.ts';
import { recipientOfRow, remoteAccount, statusReach, type ReachOptions } from '../federation/audience.ts';
import type { ConsumerHandler } from './registry.ts';

function recipientOf(account: Account) {
  return recipientOfRow({ id: account.id, uri: account.uri, inbox_url: account.inboxUrl ?? null, shared_inbox_url: account.sharedInboxUrl ?? null });
}

/**
 * Fedify's ordering key for activities about the relationship of two accounts (Follow, Accept,
 * Reject, Undo(Follow), Block, Undo(Block)), whichever of the two sends: activities with one key
 * reach each server one at a time, in the order they were sent, retries included.
 */
function relationshipKey(a: Account, b: Account): string {
  return `relationship ${[a.uri, b.uri].sort().join(' ')}`;
}

/** The follow and both accounts, if the follow is still in one of `states`. */
async function loadFollow(em: EntityManager, followId: string, states: string[]) {
  const follow = await em.findOne(FollowSchema, { id: followId });
  if (!follow || !states.includes(follow.state)) return null;
  const [follower, target] = await Promise.all([
    em.findOneOrFail(AccountSchema, { id: follow.accountId }),
    em.findOneOrFail(AccountSchema, { id: follow.targetAccountId }),
  ]);
  return { follow, follower, target, ends: endsOf(follow, follower, target) };
}

function endsOf(follow: FollowRow, follower: Account, target: Account): FollowEnds {
  return { id: follow.id, uri: follow.uri ?? null, version: follow.machineVersion, followerUri: follower.uri, targetUri: target.uri };
}

const isLocal = (a: Account) => a.domain === null;

export function federateConsumer(services: Services, federation: RoostFederation): ConsumerHandler<'federate'> {
  const log = services.log.child({ module: 'effects' });

  return async function federate(record): Promise<void> {
    const deliveries: EnqueueSpec[] = [];
    await federateFact(record, deliveries);
    await enqueueDeliveries(services, deliveries);
  };

  async function federateFact(record: Parameters<ConsumerHandler<'federate'>>[0], deliveries: EnqueueSpec[]): Promise<void> {
    const event = record.event;
    const em = services.db.em();
    const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
    const send = async (sender: string, recipients: Recipients, activity: Activity, opts: SendOptions = {}) => {
      const spec = await prepareDelivery(services, ctx, sender, recipients, activity, opts);
      if (spec) deliveries.push(spec);
    };
    const sendActorUpdate = async (account: Account) => {
      const actor = await localActorDocument(services, ctx, account);
      // Updates and the Move of one account arrive in order.
      await send(account.username, 'followers', toAsUpdateActor(account.uri, account.updatedAt, actor), {
        preferSharedInbox: true,
        orderingKey: account.uri,
      });
    };
    /**
     * A status's activity to its reach (federation/audience.ts statusReach): the followers and the
     * remote accounts addressed one by one, in one delivery (each inbox once, shared ones once for all). One ordering key per status:
     * its Create, Updates and Delete reach each server in that order.
     */
    const sendToAudience = async (s: StatusAsRow, activity: Activity, also: ReachOptions = {}) => {
      const orderingKey = `status ${s.note.uri}`;
      const reach = await statusReach(services.db.sql, s, also);
      const direct = reach.direct.map(recipientOfRow);
      // One delivery for both: a shared inbox standing for a follower and an addressed account
      // (a mentioned one, a voter, a reblogger) gets one POST, as Mastodon's StatusReachFinder.
      if (reach.followers) await send(s.username, 'followers', activity, { preferSharedInbox: true, orderingKey, also: direct });
      else if (direct.length) await send(s.username, direct, activity, { preferSharedInbox: true, orderingKey });
    };
    /** A local reblog and its original (null unless the reblog is `deleted` as asked). */
    /**
     * A follow's activity from its local end (`sender`) to its remote one, if the follow is still
     * in one of `states` and has one end here and one elsewhere; the follow and its accounts, or null.
     */
    const sendAboutFollow = async (states: string[], sender: 'follower' | 'target', build: (ends: FollowEnds) => Activity) => {
      const found = await loadFollow(em, record.actorId, states);
      const other = sender === 'follower' ? 'target' : 'follower';
      if (!found || !isLocal(found[sender]) || isLocal(found[other])) return null;
      await send(found[sender].username, recipientOf(found[other]), build(found.ends), {
        orderingKey: relationshipKey(found.follower, found.target),
      });
      return found;
    };
    /** A quote with both posts' URIs and the quoted author (who signs what the quoted side sends). */
    const loadQuoteAs = async (quoteId: string) => {
      const [q] = await services.db.sql.query<{
        id: string; state: string; account_id: string; activity_uri: string | null; approval_uri: string | null; quoted_uri: string; quoting_uri: string;
        quoting_local: boolean; quoted_local: boolean; quoted_author_uri: string; quoted_username: string;
      }>(
        `select q.id::text, q.state, q.account_id::text, q.activity_uri, q.approval_uri, coalesce(o.uri, q.quoted_uri) as quoted_uri, s.uri as quoting_uri,
                s.local as quoting_local, qa.domain is null as quoted_local, qa.uri as quoted_author_uri, qa.username as quoted_username
           from quotes q join statuses s on s.id = q.status_id join accounts qa on qa.id = q.quoted_account_id
           left join statuses o on o.id = q.quoted_status_id
          where q.id = $1`,
        [quoteId],
      );
      return q ?? null;
    };
    const loadReblog = async (reblogId: string, reblogOfId: string, deleted: boolean) => {
      const rows = await loadStatusesAs(services, ctx, [reblogId, reblogOfId]);
      const reblog = rows.get(reblogId);
      const original = rows.get(reblogOfId);
      if (!reblog || !original || !reblog.local || reblog.deleted !== deleted || reblog.reblogOfId !== original.id) return null;
      return { reblog, original, facts: announceFacts(reblog, original) };
    };
    // A remote status's creation, edit or deletion is not ours to federate: its facts say so
    // (`local: false`), so the status is not loaded to find out (facts recorded before the flag
    // existed say null: loaded and checked as before).
    if ((event.type === 'status.created' || event.type === 'status.updated' || event.type === 'status.deleted') && event.local === false) return;
    switch (event.type) {
      // A local status: Create(Note) to its audience (nothing if it was deleted meanwhile).
      case 'status.created': {
        const s = await loadStatusAs(services, ctx, event.statusId);
        if (!s || !s.local || s.deleted || s.reblogOfId) return;
        // A public quote reaches the quoted author too (Mastodon's StatusReachFinder).
        const quoted = s.quote?.quotedAccountId && (s.note.visibility === 'public' || s.note.visibility === 'unlisted') ? [s.quote.quotedAccountId] : [];
        await sendToAudience(s, toAsCreateNote(s.note), { repliedTo: true, accounts: quoted });
        log.info({ statusId: s.id, visibility: s.note.visibility }, 'Create(Note) sent');
        // A quote of a remote post asks its author: QuoteRequest with the Note inlined, to their own inbox.
        if (s.quote?.state === 'pending' && s.quote.activityUri && s.quote.quotedAccountId) {
          const author = await remoteAccount(services.db.sql, s.quote.quotedAccountId);
          if (author) {
            await send(s.username, recipientOfRow(author), toAsQuoteRequest({ id: s.quote.activityUri, actorUri: s.note.authorUri, quotedUri: s.quote.quotedUri, note: s.note }), {
              orderingKey: `status ${s.note.uri}`,
            });
            log.info({ statusId: s.id, quoted: s.quote.quotedUri }, 'QuoteRequest sent');
          }
        }
        return;
      }
      // A local status was edited (the edits branch records status.updated): Update(Note).
      case 'status.updated': {
        const s = await loadStatusAs(services, ctx, event.statusId);
        if (!s || !s.local || s.deleted || s.reblogOfId) return;
        await sendToAudience(s, toAsUpdateNote(s.note), { repliedTo: true });
        return;
      }
      // A local status was deleted: Delete(Tombstone) to the same audience.
      case 'status.deleted': {
        const s = await loadStatusAs(services, ctx, event.statusId);
        if (!s || !s.local || !s.deleted || s.reblogOfId) return;
        // Also the servers of those who reblogged it (their reblogs go with it there too).
        await sendToAudience(s, toAsDeleteNote({ uri: s.note.uri, authorUri: s.note.authorUri }), { repliedTo: true, rebloggers: 'all' });
        log.info({ statusId: s.id }, 'Delete(Note) sent');
        return;
      }
      // A local reblog: Announce to the reblogger's followers and the original's remote author.
      case 'status.reblogged':
      case 'status.unreblogged': {
        const undo = event.type === 'status.unreblogged';
        const found = await loadReblog(event.statusId, event.reblogOfId, undo);
        if (!found) return;
        const activity = undo ? toAsUndoAnnounce(found.facts) : toAsAnnounce(found.facts);
        await sendToAudience(found.reblog, activity, { accounts: [found.original.accountId] });
        return;
      }
      // A local account favourited a remote status: Like to its author (Undo(Like) when taken back).
      case 'status.favourited':
      case 'status.unfavourited': {
        const undo = event.type === 'status.unfavourited';
        const [fav] = await services.db.sql.query(`select 1 from favourites where id = $1`, [event.favouriteId]);
        if (undo === !!fav) return;
        const [account, status] = await Promise.all([
          em.findOne(AccountSchema, { id: event.accountId, domain: null }),
          loadStatusAs(services, ctx, event.statusId),
        ]);
        if (!account || !status || status.local) return;
        const author = await remoteAccount(services.db.sql, status.accountId);
        if (!author) return;
        const like = { favouriteId: event.favouriteId, actorUri: account.uri, objectUri: status.note.uri };
        await send(account.username, recipientOfRow(author), undo ? toAsUndoLike(like) : toAsLike(like), {
          orderingKey: `favourite ${account.uri} ${status.note.uri}`,
        });
        return;
      }
      // A local account pinned (unpinned) its status: Add to (Remove from) its featured collection,
      // to its followers (Mastodon's PinsController), if the pin is still there (gone).
      case 'status.pinned':
      case 'status.unpinned': {
        const remove = event.type === 'status.unpinned';
        const [[pin], account, s] = await Promise.all([
          services.db.sql.query(`select 1 from status_pins where id = $1`, [event.pinId]),
          em.findOne(AccountSchema, { id: event.accountId, domain: null }),
          loadStatusAs(services, ctx, event.statusId),
        ]);
        if (remove === !!pin || !account || account.suspendedAt || !s || !s.local || s.accountId !== account.id) return;
        if (!remove && s.deleted) return;
        const facts = { pinId: event.pinId, actorUri: account.uri, featuredUri: ctx.getFeaturedUri(account.username).href, statusUri: s.note.uri };
        await send(account.username, 'followers', remove ? toAsRemove(facts) : toAsAdd(facts), { preferSharedInbox: true, orderingKey: `featured ${account.uri}` });
        log.info({ statusId: s.id, pinId: event.pinId }, remove ? 'Remove sent' : 'Add sent');
        return;
      }
      // A local poll's throttled Update is due (or it closed): Update(Question) with the latest
      // tallies to the status' audience, its remote voters and those who reblogged it (Mastodon's
      // DistributePollUpdateWorker). The machine emits this at most once per 3 minutes per poll.
      case 'poll.updated': {
        const statusId = await localPollStatusId(services, event.pollId);
        const s = statusId ? await loadStatusAs(services, ctx, statusId) : null;
        if (!s || !s.local || s.deleted || !s.note.poll || !s.pollId) return;
        // A poll hiding its totals tells nobody until its end (Mastodon sends no Update for it).
        if (s.note.poll.options.some((o) => o.votes === null)) return;
        await sendToAudience(s, toAsUpdatePoll({ ...s.note, poll: s.note.poll }, record.id), { pollVoters: s.pollId, rebloggers: 'live' });
        log.info({ statusId: s.id, pollId: s.pollId }, 'Update(Question) sent');
        return;
      }
      // A local account voted on a remote poll: one Create(Note) per choice to the poll's author.
      case 'poll.voted': {
        // Only a local vote on a poll not known to be ours reaches here (its `wants` in
        // events/consumers.ts); with pollLocal null (recorded before the field), loadVoteAs checks the poll.
        const vote = await loadVoteAs(services, event.pollId, event.voterId, event.choices);
        if (!vote) return;
        for (const v of vote.votes) {
          await send(vote.voterUsername, recipientOfRow(vote.author), toAsVote(v), { orderingKey: `vote ${v.voterUri} ${v.questionUri}` });
        }
        log.info({ pollId: event.pollId, choices: vote.votes.length }, 'votes sent');
        return;
      }
      // A local account asks a remote one: Follow.
      case 'follow.requested': {
        const found = await sendAboutFollow(['requested'], 'follower', toAsFollow);
        if (found) log.info({ followId: found.follow.id, target: found.target.uri }, 'Follow sent');
        return;
      }
      // A local account accepted a remote follower (or was asked again): Accept.
      case 'follow.accepted':
      case 'follow.request_repeated': {
        const found = await sendAboutFollow(['accepted'], 'target', toAsAccept);
        if (found) log.info({ followId: found.follow.id, follower: found.follower.uri }, 'Accept sent');
        return;
      }
      // A local target rejected a remote request, or removed a remote follower: Reject.
      case 'follow.rejected':
      case 'follow.removed':
        await sendAboutFollow(['rejected', 'removed'], 'target', toAsReject);
        return;
      // A local follower unfollowed (or withdrew a request to) a remote account: Undo.
      case 'follow.undone':
      case 'follow.cancelled':
        await sendAboutFollow(['undone', 'cancelled'], 'follower', toAsUndoFollow);
        return;
      // A Follow refused before any row (the target hides the follower's domain): Reject.
      case 'follow.refused': {
        const [follower, target] = await Promise.all([
          em.findOne(AccountSchema, { id: event.followerId }),
          em.findOne(AccountSchema, { id: event.targetId }),
        ]);
        if (!follower || !target || isLocal(follower) || !isLocal(target)) return;
        await send(target.username, recipientOf(follower),
          toAsRejectActivity({ targetUri: target.uri, followerUri: follower.uri, activityUri: event.activityUri, eventId: record.id }),
          { orderingKey: relationshipKey(follower, target) },
        );
        return;
      }
      // The profile of a local account changed: Update(Person) to every server with a follower.
      // 'followers' makes Fedify ask the followers dispatcher (federation/index.ts), which answers
      // the remote accepted followers; shared inboxes get one copy.
      // (A lock change arrives here as the profile edit's account.updated.)
      case 'account.updated': {
        const account = await em.findOne(AccountSchema, { id: record.actorId, domain: null });
        if (!account || account.suspendedAt) return;
        await sendActorUpdate(account);
        log.info({ accountId: account.id }, 'Update(Person) sent');
        return;
      }
      // A local account moved (Mastodon's MoveService): its actor now carries movedTo, then the
      // Move itself reaches every server with a follower, whose followers migrate there.
      case 'account.moved':
      case 'account.move_replayed': {
        const account = await em.findOne(AccountSchema, { id: record.actorId, domain: null });
        if (!account || account.suspendedAt || account.movedToAccountId !== event.targetAccountId) return;
        const target = await em.findOneOrFail(AccountSchema, { id: event.targetAccountId });
        await sendActorUpdate(account);
        // The outbox event's id: a replayed Move (its own event) is not taken for one already
        // processed, and a retry of this consumer sends the same Move.
        await send(account.username, 'followers',
          toAsMove({ actorUri: account.uri, targetUri: target.uri, moveId: record.id }),
          { preferSharedInbox: true, orderingKey: account.uri },
        );
        log.info({ accountId: account.id, target: target.uri }, 'Move sent');
        return;
      }
      // A moderator suspended a local account (services/admin-accounts.ts): its Delete goes to every
      // server with a follower, as Mastodon's, so they drop the account and its posts at once.
      case 'account.suspended': {
        const account = await em.findOne(AccountSchema, { id: record.actorId, domain: null });
        if (!account || !account.suspendedAt) return;
        await send(account.username, 'followers', toAsDeleteActor({ actorUri: account.uri, eventId: record.id }), {
          preferSharedInbox: true,
          orderingKey: account.uri,
        });
        log.info({ accountId: account.id }, 'Delete(Person) sent for a suspension');
        return;
      }
      // A local account blocked a remote one: Block (the block may have been lifted meanwhile).
      case 'block.created': {
        const [row] = await services.db.sql.query<{ uri: string | null }>(`select uri from blocks where id = $1`, [event.blockId]);
        if (!row?.uri) return;
        const [account, target] = await Promise.all([
          em.findOneOrFail(AccountSchema, { id: event.accountId }),
          em.findOneOrFail(AccountSchema, { id: event.targetId }),
        ]);
        if (!isLocal(account) || isLocal(target)) return;
        await send(account.username, recipientOf(target), toAsBlock({ uri: row.uri, actorUri: account.uri, targetUri: target.uri }), {
          orderingKey: relationshipKey(account, target),
        });
        return;
      }
      case 'block.removed': {
        if (!event.blockUri) return;
        const [account, target] = await Promise.all([
          em.findOneOrFail(AccountSchema, { id: event.accountId }),
          em.findOneOrFail(AccountSchema, { id: event.targetId }),
        ]);
        if (!isLocal(account) || isLocal(target)) return;
        await send(account.username, recipientOf(target),
          toAsUndoBlock({ uri: event.blockUri, actorUri: account.uri, targetUri: target.uri }),
          { orderingKey: relationshipKey(account, target) },
        );
        return;
      }
      // A report about a remote account, to be forwarded: Flag from the instance actor to its server.
      case 'report.created': {
        const [report] = await services.db.sql.query<{ id: string; target_account_id: string; comment: string; forwarded: boolean; status_uris: string[] }>(
          `select r.id::text, r.target_account_id::text, r.comment, r.forwarded,
                  array(select s.uri from statuses s where s.id = any(r.status_ids) and s.account_id = r.target_account_id order by s.id) as status_uris
             from reports r where r.id = $1`,
          [event.reportId],
        );
        if (!report?.forwarded) return;
        const target = await em.findOne(AccountSchema, { id: report.target_account_id });
        if (!target || isLocal(target)) return;
        const actorUri = instanceActorUri(services);
        await send(INSTANCE_ACTOR, recipientOf(target),
          toAsFlag({ id: `${actorUri}#reports/${report.id}`, actorUri, targetUri: target.uri, statusUris: report.status_uris, comment: report.comment }),
        );
        log.info({ reportId: report.id, target: target.uri }, 'Flag sent');
        return;
      }
      // A quote accepted with one side here: a local author's stamp goes to the remote quoter
      // (Accept of its QuoteRequest); a remote author's stamp on a local quote: the quoting Note
      // goes again (Update) carrying it.
      case 'quote.accepted': {
        const q = await loadQuoteAs(event.quoteId);
        if (!q || q.state !== 'accepted') return;
        if (event.quotedLocal && !event.local) {
          const requester = await remoteAccount(services.db.sql, q.account_id);
          if (!requester || !q.activity_uri || !q.approval_uri) return;
          await send(q.quoted_username, recipientOfRow(requester), toAsAcceptQuote({
            quoteId: q.id, quotedAuthorUri: q.quoted_author_uri, requesterUri: requester.uri, activityUri: q.activity_uri,
            quotedUri: q.quoted_uri, quotingUri: q.quoting_uri, approvalUri: q.approval_uri,
          }), { orderingKey: `quote ${q.quoting_uri}` });
          log.info({ quoteId: q.id }, 'Accept(QuoteRequest) sent');
        } else if (event.local && !event.quotedLocal) {
          const s = await loadStatusAs(services, ctx, event.statusId);
          if (!s || !s.local || s.deleted) return;
          await sendToAudience(s, toAsUpdateNote(s.note, `quote-${q.id}`), { repliedTo: true, accounts: [event.quotedAccountId] });
        }
        return;
      }
      // A local status's quote policy changed: Update(Note) with its interactionPolicy (not an edit).
      case 'status.quote_policy_changed': {
        const s = await loadStatusAs(services, ctx, event.statusId);
        if (!s || !s.local || s.deleted || s.reblogOfId) return;
        await sendToAudience(s, toAsUpdateNote(s.note, `policy-${record.id}`), { repliedTo: true });
        return;
      }
      // A local author took a stamp back: Delete of the QuoteAuthorization to the quoting author and the quoted author's followers.
      case 'quote.revoked': {
        const q = await loadQuoteAs(event.quoteId);
        if (!q || q.state !== 'revoked' || !q.approval_uri || !q.quoted_local) return;
        const quoter = q.quoting_local ? null : await remoteAccount(services.db.sql, q.account_id);
        await send(q.quoted_username, 'followers', toAsDeleteAuthorization({ approvalUri: q.approval_uri, authorUri: q.quoted_author_uri }), {
          preferSharedInbox: true,
          also: quoter ? [recipientOfRow(quoter)] : [],
          orderingKey: `quote ${q.quoting_uri}`,
        });
        log.info({ quoteId: q.id }, 'Delete(QuoteAuthorization) sent');
        return;
      }
      // A remote QuoteRequest the policy refused: Reject to the requester.
      case 'quote.refused': {
        const [requester, quotedAuthor, s] = await Promise.all([
          remoteAccount(services.db.sql, event.requesterId),
          em.findOne(AccountSchema, { id: event.quotedAccountId, domain: null }),
          loadStatusAs(services, ctx, event.quotedStatusId),
        ]);
        if (!requester || !quotedAuthor || !s) return;
        await send(quotedAuthor.username, recipientOfRow(requester), toAsRejectQuote({
          key: record.id, quotedAuthorUri: quotedAuthor.uri, requesterUri: requester.uri, activityUri: event.activityUri, quotedUri: s.note.uri, quotingUri: event.instrumentUri,
        }), { orderingKey: `quote ${event.instrumentUri}` });
        return;
      }
      default:
        // The compiler checks that every fact declared for this consumer has its case.
        event satisfies never;
    }
  }
}
