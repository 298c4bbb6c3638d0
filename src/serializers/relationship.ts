/** Mastodon's Relationship entity, from facts loaded once for a page of accounts (pure). */
export interface MastodonRelationship {
  id: string;
  following: boolean;
  showing_reblogs: boolean;
  notifying: boolean;
  languages: string[] | null;
  followed_by: boolean;
  blocking: boolean;
  blocked_by: boolean;
  muting: boolean;
  muting_notifications: boolean;
  requested: boolean;
  requested_by: boolean;
  domain_blocking: boolean;
  endorsed: boolean;
  note: string;
}

export interface RelationshipFacts {
  /** The viewer's follow of the account: its state and options, if any. */
  outgoing: { state: string; showReblogs: boolean; notify: boolean; languages: string[] | null } | null;
  /** The account's follow of the viewer: its state, if any. */
  incomingState: string | null;
  blocking: boolean;
  blockedBy: boolean;
  mute: { hideNotifications: boolean } | null;
  domainBlocking: boolean;
  endorsed: boolean;
  note: string;
}

export function serializeRelationship(accountId: string, f: RelationshipFacts): MastodonRelationship {
  const following = f.outgoing?.state === 'accepted';
  const requested = f.outgoing?.state === 'requested';
  const live = following || requested;
  return {
    id: accountId,
    following,
    showing_reblogs: live ? f.outgoing!.showReblogs : false,
    notifying: live ? f.outgoing!.notify : false,
    languages: live ? f.outgoing!.languages : null,
    followed_by: f.incomingState === 'accepted',
    blocking: f.blocking,
    blocked_by: f.blockedBy,
    muting: f.mute !== null,
    muting_notifications: f.mute?.hideNotifications ?? false,
    requested,
    requested_by: f.incomingState === 'requested',
    domain_blocking: f.domainBlocking,
    endorsed: f.endorsed,
    note: f.note,
  };
}
