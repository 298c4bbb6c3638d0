/**
 * ActivityPub → rows: remote actors become (or refresh) remote accounts. Everything a remote
 * server says is sanitised here, on ingest (src/lib/sanitize.ts): the summary and field values as
 * Mastodon's strict HTML, names as plain text, url/avatar/header as http(s) URLs or nothing, each
 * cut to a sane length, so what is stored is safe to serve as it is.
 */
import { isIP } from 'node:net';
import { isActor, PropertyValue, type Actor, type Object as AsObject } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema, type Account } from '../../db/entities/index.ts';
import { RoostError } from '../../lib/errors.ts';
import { followActorRedirect } from '../../services/moves.ts';
import { plainText, REMOTE_LIMITS, safeHttpUrl, sanitizeRemoteHtml } from '../../lib/sanitize.ts';
import { isNonPublicAddress } from '../../lib/safe-fetch.ts';

/** What Mastodon accepts as a remote username (Account's format validation for remote accounts). */
const REMOTE_USERNAME = /^[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?$/i;
/** At most this many attachments are looked at (each may be a link Fedify would fetch). */
const MAX_ATTACHMENTS_SCANNED = 32;
const MAX_ALIASES = 32;
import { insertRemoteAccount, refreshRemoteAccount } from '../../services/accounts.ts';

function str(v: unknown): string {
  return v == null ? '' : String(v);
}

export function actorDomain(actorId: URL): string {
  return actorId.host.toLowerCase();
}

/** Inserts or refreshes the remote account for an actor; returns the row. */
export async function persistAccount(services: Services, actor: Actor): Promise<Account> {
  if (!actor.id) throw new RoostError(422, 'Actor has no id');
  const uri = actor.id.href;
  const username = actor.preferredUsername ? str(actor.preferredUsername) : null;
  if (!username) throw new RoostError(422, `Actor ${uri} has no preferredUsername`);
  if (username.length > 255 || !REMOTE_USERNAME.test(username)) throw new RoostError(422, `Actor ${uri} has an invalid preferredUsername`);
  const now = services.clock.now();
  const fields: Account['fields'] = [];
  let scanned = 0;
  for await (const a of actor.getAttachments({ suppressError: true })) {
    if (++scanned > MAX_ATTACHMENTS_SCANNED || fields.length >= REMOTE_LIMITS.fields) break;
    if (a instanceof PropertyValue) {
      const name = plainText(a.name, REMOTE_LIMITS.fieldName);
      if (!name) continue;
      fields.push({ name, value: sanitizeRemoteHtml(a.value, REMOTE_LIMITS.fieldValue), verified_at: null });
    }
  }
  const icon = await actor.getIcon({ suppressError: true }).catch(() => null);
  const image = await actor.getImage({ suppressError: true }).catch(() => null);
  const link = (u: URL | null | undefined) => (u ? safeHttpUrl(u) : null);
  // Inboxes are POSTed to by Fedify's delivery, outside the bounded fetcher: an inbox on a
  // loopback/private address literal or a localhost name is not kept (tests and labs excepted).
  const inbox = (u: URL | null | undefined) => {
    const href = link(u);
    if (!href || services.config.federation.allowPrivateAddresses) return href;
    const host = new URL(href).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isNonPublicAddress(host))) return null;
    return href;
  };
  const data = {
    username,
    domain: actorDomain(actor.id),
    displayName: plainText(actor.name, REMOTE_LIMITS.displayName),
    note: sanitizeRemoteHtml(actor.summary, REMOTE_LIMITS.note),
    url: safeHttpUrl(actor.url instanceof URL ? actor.url : (actor.url as { href?: URL } | null)?.href) ?? uri,
    inboxUrl: inbox(actor.inboxId),
    sharedInboxUrl: inbox(actor.endpoints?.sharedInbox),
    outboxUrl: link(actor.outboxId),
    followersUrl: link(actor.followersId),
    followingUrl: link(actor.followingId),
    featuredUrl: link(actor.featuredId),
    actorType: actorTypeName(actor),
    locked: actor.manuallyApprovesFollowers ?? false,
    discoverable: actor.discoverable ?? null,
    indexable: actor.indexable ?? false,
    avatarUrl: icon?.url instanceof URL ? safeHttpUrl(icon.url) : null,
    headerUrl: image?.url instanceof URL ? safeHttpUrl(image.url) : null,
    fields,
    alsoKnownAs: actor.aliasIds.slice(0, MAX_ALIASES).map((u) => safeHttpUrl(u)).filter((u): u is string => u !== null),
    fetchedAt: now,
    updatedAt: now,
  };
  // The writes belong to the accounts service: a new row is born with its account actor's
  // snapshot, and a change of `locked` is a step of that actor.
  const existing = await services.db.em().findOne(AccountSchema, { uri });
  if (existing) {
    const refreshed = await refreshRemoteAccount(services, existing, data);
    if (await followActorRedirect(services, refreshed.id, actor.successorId?.href ?? null)) return (await services.db.em().findOne(AccountSchema, { id: refreshed.id }))!;
    return refreshed;
  }
  const account = await insertRemoteAccount(services, { uri, ...data });
  if (actor.successorId && (await followActorRedirect(services, account.id, actor.successorId.href))) {
    return (await services.db.em().findOne(AccountSchema, { id: account.id }))!;
  }
  return account;
}

export function actorTypeName(actor: AsObject): string {
  const name = actor.constructor.name;
  return ['Person', 'Service', 'Application', 'Group', 'Organization'].includes(name) ? name : 'Person';
}

export { isActor };
