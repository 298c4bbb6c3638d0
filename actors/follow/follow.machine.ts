/**
 * Follow actor: one per ordered pair (follower, target), local or remote on either side.
 * The same actor lives for the whole history of the pair: a relationship that ended (rejected,
 * cancelled, undone, removed, blocked) restarts on the next `follow.request`, with fresh
 * options. One row per pair keeps a single unique key and a version that only grows, so
 * optimistic concurrency also covers "request again" racing "reject".
 *
 * States (adjectives):
 *   idle       no relationship yet
 *   requested  pending follow request, waiting for the target (or the remote server)
 *   accepted   following
 *   rejected   the target rejected the request
 *   cancelled  the requester withdrew the pending request
 *   undone     the follower unfollowed
 *   removed    the target removed the follower
 *   blocked    one side blocked the other while requested or accepted
 *
 * Events (machines never read the DB: the service looks facts up and passes them in):
 *   follow.request  {targetLocked, targetRemote, requesterSilenced, requesterMutedByTarget,
 *                    options?}  — from idle or an ended state starts a relationship; in
 *                    requested/accepted it is Mastodon's re-POST of /follow and only updates
 *                    the options given (the facts are not re-evaluated, as in Mastodon).
 *   follow.accept   requested → accepted (local approval, or the remote Accept arriving)
 *   follow.reject   requested → rejected (local rejection, or the remote Reject of a request)
 *   follow.cancel   requested → cancelled (requester withdraws)
 *   follow.undo     accepted → undone; requested → cancelled. Mastodon's POST /unfollow and an
 *                   inbound Undo{Follow} both mean "stop", whatever the state, so one event.
 *   follow.remove   accepted → removed (POST /remove_from_followers, or a remote Reject of an
 *                   established follow: try follow.reject, fall back to follow.remove)
 *   follow.update   {options} in requested/accepted: change reblogs/notify/languages
 *   target.unlocked {requesterSilenced, requesterMutedByTarget} — the target account emitted
 *                   account.unlocked; the service sends this to each of its pending requests.
 *                   Named after the account's domain event it relays, not an imperative.
 *   follow.block    {by: 'follower' | 'target'} either side blocks: requested/accepted → blocked
 *
 * The mission rules for a new request (local target; `targetRemote` always waits for Accept):
 *   - requester silenced, or explicitly muted by the target → requested, even if unlocked;
 *   - target locked → requested;
 *   - otherwise → accepted immediately.
 * And on `target.unlocked`: a pending request is accepted unless the requester is silenced or
 * muted by the target, in which case it stays requested (the event is accepted, nothing
 * changes, nothing is emitted: the mute must not leak). Those requests are accepted only
 * through the normal approval (`follow.accept`).
 *
 * Emitted, all with {followerId, targetId}:
 *   follow.requested                          → follow_request notification / federate Follow
 *   follow.accepted {via}                     → via 'automatic': `follow` notification;
 *                                               federate Accept when the target is local
 *   follow.rejected, follow.cancelled, follow.undone, follow.removed
 *                                             → federate Reject / Undo, drop notifications
 *   follow.blocked {by, previous}             → previous 'requested' | 'accepted'; the Block
 *                                               activity itself tells the remote side
 *   follow.updated {reblogs, notify, languages} only when an option actually changed
 * Payloads never say WHY a request is pending (locked, silenced, muted): no mute leaks through
 * notifications or federation.
 *
 * Options (Mastodon POST /accounts/:id/follow): reblogs (default true), notify (default
 * false), languages (null = all; an empty list is normalised to null, duplicates dropped).
 * A patch only changes the keys it carries; `languages: null` clears the filter.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import type { PersistedSnapshot } from '../runtime/step.ts';
import { defineMachine } from '../runtime/definition.ts';

export interface FollowOptions {
  reblogs: boolean;
  notify: boolean;
  languages: string[] | null;
}

export type FollowOptionsPatch = Partial<FollowOptions>;

export interface FollowContext extends FollowOptions {
  followerId: string;
  targetId: string;
}

export interface FollowInput {
  followerId: string;
  targetId: string;
}

/** Facts the service looks up before sending `follow.request`. */
export interface FollowRequestFacts {
  /** The target manually approves followers. */
  targetLocked: boolean;
  /** The target is on another server: the request waits for its Accept or Reject. */
  targetRemote: boolean;
  /** The requester is silenced (limited) by a moderator, or its domain is. */
  requesterSilenced: boolean;
  /** The target explicitly mutes the requester. */
  requesterMutedByTarget: boolean;
}

export type FollowEvent =
  | ({ type: 'follow.request'; options?: FollowOptionsPatch } & FollowRequestFacts)
  | { type: 'follow.accept' }
  | { type: 'follow.reject' }
  | { type: 'follow.cancel' }
  | { type: 'follow.undo' }
  | { type: 'follow.remove' }
  | { type: 'follow.update'; options: FollowOptionsPatch }
  | { type: 'target.unlocked'; requesterSilenced: boolean; requesterMutedByTarget: boolean }
  | { type: 'follow.block'; by: 'follower' | 'target' };

export type FollowAcceptedVia = 'automatic' | 'approval' | 'unlock';

interface Pair {
  followerId: string;
  targetId: string;
}

export type FollowEmitted =
  | ({ type: 'follow.requested' } & Pair)
  | ({ type: 'follow.accepted'; via: FollowAcceptedVia } & Pair)
  | ({ type: 'follow.rejected' } & Pair)
  | ({ type: 'follow.cancelled' } & Pair)
  | ({ type: 'follow.undone' } & Pair)
  | ({ type: 'follow.removed' } & Pair)
  | ({ type: 'follow.blocked'; by: 'follower' | 'target'; previous: 'requested' | 'accepted' } & Pair)
  | ({ type: 'follow.updated' } & Pair & FollowOptions);

type EndEmittedType = 'follow.requested' | 'follow.rejected' | 'follow.cancelled' | 'follow.undone' | 'follow.removed';

export const DEFAULT_FOLLOW_OPTIONS: Readonly<FollowOptions> = Object.freeze({
  reblogs: true,
  notify: false,
  languages: null,
});

/** `base` with the keys present in `patch` applied; languages normalised. */
export function applyFollowOptions(base: FollowOptions, patch: FollowOptionsPatch | undefined): FollowOptions {
  const next: FollowOptions = { reblogs: base.reblogs, notify: base.notify, languages: base.languages };
  if (patch?.reblogs !== undefined) next.reblogs = patch.reblogs;
  if (patch?.notify !== undefined) next.notify = patch.notify;
  if (patch?.languages !== undefined) next.languages = normaliseLanguages(patch.languages);
  return next;
}

function normaliseLanguages(languages: string[] | null): string[] | null {
  if (languages === null) return null;
  const unique = [...new Set(languages)];
  return unique.length === 0 ? null : unique;
}

function sameOptions(a: FollowOptions, b: FollowOptions): boolean {
  if (a.reblogs !== b.reblogs || a.notify !== b.notify) return false;
  if (a.languages === null || b.languages === null) return a.languages === b.languages;
  return a.languages.length === b.languages.length && a.languages.every((lang, i) => lang === b.languages?.[i]);
}

function optionsOf(context: FollowContext): FollowOptions {
  return { reblogs: context.reblogs, notify: context.notify, languages: context.languages };
}

function patchOf(event: FollowEvent): FollowOptionsPatch | undefined {
  return event.type === 'follow.request' || event.type === 'follow.update' ? event.options : undefined;
}

export const followMachine = setup({
  types: {
    context: {} as FollowContext,
    events: {} as FollowEvent,
    input: {} as FollowInput,
    emitted: {} as FollowEmitted,
  },
  guards: {
    /** The mission rule: locked target, remote target, silenced or muted requester. */
    needsApproval: ({ event }) =>
      event.type === 'follow.request' &&
      (event.targetRemote || event.targetLocked || event.requesterSilenced || event.requesterMutedByTarget),
    /** On unlock, requests from silenced or muted requesters stay pending. */
    staysPendingOnUnlock: ({ event }) =>
      event.type === 'target.unlocked' && (event.requesterSilenced || event.requesterMutedByTarget),
  },
  actions: {
    /** A new relationship: options from defaults plus the request's patch. */
    startRelationship: assign(({ event }) => applyFollowOptions({ ...DEFAULT_FOLLOW_OPTIONS }, patchOf(event))),
    /** Change options in place; announce only a real change. */
    updateOptions: enqueueActions(({ context, event, enqueue }) => {
      const before = optionsOf(context);
      const after = applyFollowOptions(before, patchOf(event));
      if (sameOptions(before, after)) return;
      enqueue.assign(after);
      enqueue.emit({
        type: 'follow.updated',
        followerId: context.followerId,
        targetId: context.targetId,
        ...after,
      });
    }),
    announce: emit(({ context }, params: { type: EndEmittedType }) => ({
      type: params.type,
      followerId: context.followerId,
      targetId: context.targetId,
    })),
    announceAccepted: emit(({ context }, params: { via: FollowAcceptedVia }) => ({
      type: 'follow.accepted' as const,
      followerId: context.followerId,
      targetId: context.targetId,
      via: params.via,
    })),
    announceBlocked: emit(({ context, event }, params: { previous: 'requested' | 'accepted' }) => ({
      type: 'follow.blocked' as const,
      followerId: context.followerId,
      targetId: context.targetId,
      by: (event as Extract<FollowEvent, { type: 'follow.block' }>).by,
      previous: params.previous,
    })),
  },
}).createMachine({
  id: 'follow',
  context: ({ input }) => {
    if (typeof input?.followerId !== 'string' || input.followerId === '') {
      throw new TypeError('follow: input.followerId must be a non-empty string');
    }
    if (typeof input.targetId !== 'string' || input.targetId === '') {
      throw new TypeError('follow: input.targetId must be a non-empty string');
    }
    if (input.followerId === input.targetId) {
      throw new TypeError('follow: an account cannot follow itself');
    }
    return { followerId: input.followerId, targetId: input.targetId, ...DEFAULT_FOLLOW_OPTIONS };
  },
  initial: 'idle',
  states: {
    idle: { on: { 'follow.request': restart() } },
    requested: {
      on: {
        'follow.request': { actions: 'updateOptions' },
        'follow.update': { actions: 'updateOptions' },
        'follow.accept': { target: 'accepted', actions: { type: 'announceAccepted', params: { via: 'approval' } } },
        'follow.reject': { target: 'rejected', actions: { type: 'announce', params: { type: 'follow.rejected' } } },
        'follow.cancel': { target: 'cancelled', actions: { type: 'announce', params: { type: 'follow.cancelled' } } },
        'follow.undo': { target: 'cancelled', actions: { type: 'announce', params: { type: 'follow.cancelled' } } },
        'target.unlocked': [
          // Accepted but inert: a target (itself) keeps it an accepted event, not a rejected one.
          { guard: 'staysPendingOnUnlock', target: 'requested' },
          { target: 'accepted', actions: { type: 'announceAccepted', params: { via: 'unlock' } } },
        ],
        'follow.block': { target: 'blocked', actions: { type: 'announceBlocked', params: { previous: 'requested' } } },
      },
    },
    accepted: {
      on: {
        'follow.request': { actions: 'updateOptions' },
        'follow.update': { actions: 'updateOptions' },
        'follow.undo': { target: 'undone', actions: { type: 'announce', params: { type: 'follow.undone' } } },
        'follow.remove': { target: 'removed', actions: { type: 'announce', params: { type: 'follow.removed' } } },
        'follow.block': { target: 'blocked', actions: { type: 'announceBlocked', params: { previous: 'accepted' } } },
      },
    },
    // Ended states: the pair may start over with a new request.
    rejected: { on: { 'follow.request': restart() } },
    cancelled: { on: { 'follow.request': restart() } },
    undone: { on: { 'follow.request': restart() } },
    removed: { on: { 'follow.request': restart() } },
    blocked: { on: { 'follow.request': restart() } },
  },
});

/** Starting a relationship, from idle or an ended state: fresh options, the mission rules. */
function restart() {
  return [
    {
      guard: 'needsApproval' as const,
      target: 'requested' as const,
      actions: ['startRelationship' as const, { type: 'announce' as const, params: { type: 'follow.requested' as const } }],
    },
    {
      target: 'accepted' as const,
      actions: ['startRelationship' as const, { type: 'announceAccepted' as const, params: { via: 'automatic' as const } }],
    },
  ];
}

export type FollowSnapshot = PersistedSnapshot<FollowContext>;

export type FollowState = 'idle' | 'requested' | 'accepted' | 'rejected' | 'cancelled' | 'undone' | 'removed' | 'blocked';

/** The state of a persisted follow snapshot (its value is always a top-level state name). */
export function followState(snapshot: FollowSnapshot): FollowState {
  return snapshot.value as FollowState;
}

/** The follow machine with its definition version (bump it and add a migration when old snapshots would be misread). */
export const followDefinition = defineMachine(followMachine, { version: 1 });
export type FollowMachine = typeof followMachine;
