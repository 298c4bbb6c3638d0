/**
 * Forwarded activities: a Create that reaches an inbox signed by someone other than its actor (a
 * reply the thread's owner forwards to its followers, as ActivityPub's inbox forwarding does), or
 * whose HTTP signature does not verify.
 *
 * Fedify first looks for a proof embedded in the activity — a Linked Data signature
 * (RsaSignature2017, what Mastodon adds to the public activities it forwards) or an object
 * integrity proof (FEP-8b32) — and takes the activity on it, whoever signed the request. Without
 * one, it would refuse the activity (401: the signer is not the actor, or the signature does not
 * verify). Here instead, the activity is used only to point at its object: the object is fetched
 * anew from its origin (past the cache, signed by the instance actor), and taken only when the
 * origin serves it under that id, attributed to the activity's actor on the same host. What the
 * forwarder said about it is never believed; an origin that answers 404, 410 or 401 refuses it.
 *
 * Two ways in: `forwardedCreateGate` before Fedify, for a Create without an embedded proof whose
 * request is signed with a key that is not the actor's (Fedify would answer 401 before any hook;
 * the keyId's shape decides cheaply, and only when it looks foreign is the key fetched to check
 * its owner), and Fedify's onUnverifiedActivity (./index.ts) for a Create whose HTTP signature
 * failed. The re-fetch is signed by the recipient of a personal inbox (a followers-only reply is
 * served to a follower), else by the instance actor.
 */
import type { Context } from '@fedify/fedify';
import { Create, isActor, type Activity } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema, type Account } from '../../db/entities/index.ts';
import { isStatusObject, persistAccount } from '../convert/from-as.ts';
import { freshDocumentLoader, lookupObjectSafely } from '../lookup.ts';
import { newFetchBudget, persistNote } from '../remote-statuses.ts';
import { inboxBodyJson, signatureKeyId } from '../inbox-guard.ts';
import { localAccountFromUri } from './resolve.ts';
import type { RoostFederation } from '../index.ts';

const INBOX_PATH = /^\/(?:users\/([^/]+)\/)?inbox$/;

/**
 * Whether a keyId is the actor's own key: the actor's URI with a fragment (Mastodon, Pleroma,
 * Misskey: `…/users/x#main-key`) or a path below it (GoToSocial: `…/users/x/main-key`).
 */
export function keyIdIsActors(keyId: URL, actorUri: string): boolean {
  const k = new URL(keyId.href);
  k.hash = '';
  return k.href === actorUri || k.href.startsWith(`${actorUri.replace(/\/$/, '')}/`);
}

function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  const id = (v as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : null;
}

function refused(error: string): Response {
  return Response.json({ error }, { status: 401 });
}

/** An account by actor URI: known, or fetched (signed by the instance actor) and stored. */
async function authorOf(services: Services, ctx: Context<void>, uri: URL): Promise<Account | null> {
  const known = await services.db.em().findOne(AccountSchema, { uri: uri.href });
  if (known) return known.suspendedAt ? null : known;
  const actor = await lookupObjectSafely(uri, ctx.documentLoader, ctx.contextLoader);
  if (!actor || !isActor(actor) || actor.id?.href !== uri.href) return null;
  return persistAccount(services, actor).catch(() => null);
}

/**
 * The status `objectUri` as its origin serves it now, stored when it concerns this server (as an
 * incoming Create: services via persistNote). 'refused' when the origin does not confirm it.
 */
export async function acceptByRefetch(
  services: Services,
  ctx: Context<void>,
  objectUri: URL,
  actorUri: string | null,
  recipient: string | null,
): Promise<'accepted' | 'refused'> {
  const local = new URL(services.config.publicUrl).origin;
  if (objectUri.origin === local || (objectUri.protocol !== 'https:' && objectUri.protocol !== 'http:')) return 'refused';
  if (!(await services.domainPolicy.allowed(objectUri.host.toLowerCase()))) return 'refused';
  // Signed by the recipient when the activity came to a personal inbox (a followers-only reply is
  // served to a follower), else by the instance actor; past the cache either way.
  const loader = recipient ? await ctx.getDocumentLoader({ identifier: recipient }) : await freshDocumentLoader(ctx);
  const object = await lookupObjectSafely(objectUri, loader, ctx.contextLoader);
  if (!isStatusObject(object) || object.id?.href !== objectUri.href) return 'refused';
  const attributed = object.attributionIds[0];
  if (!attributed || attributed.origin !== objectUri.origin) return 'refused';
  if (actorUri !== null && attributed.href !== actorUri) return 'refused';
  const author = await authorOf(services, ctx, attributed);
  if (!author || author.domain === null) return 'refused';
  const deliveredTo = recipient ? await localAccountFromUri(services, ctx, ctx.getActorUri(recipient)) : null;
  await persistNote(services, ctx, object, author, {
    depth: 0,
    budget: newFetchBudget(),
    deliveredTo,
    requireLocalRelation: true,
  });
  return 'accepted';
}

/**
 * Before Fedify: an inbox POST of a Create without a Linked Data signature or an object proof,
 * signed with a key that is not its actor's, is a forwarded one: its object is re-fetched
 * (acceptByRefetch) and the request answered here (202, or 401 when the origin does not confirm
 * it). Anything else: null, on to Fedify. Runs after guardInbox (signed, bounded, JSON).
 */
export function forwardedCreateGate(services: Services, federation: RoostFederation): (request: Request) => Promise<Response | null> {
  return async (request) => {
    if (request.method !== 'POST') return null;
    const path = INBOX_PATH.exec(new URL(request.url).pathname);
    if (!path) return null;
    const keyId = signatureKeyId(request.headers);
    if (!keyId) return null;
    // Read and parsed once for all the gates (../inbox-guard.ts).
    const json = (await inboxBodyJson(request)) as Record<string, unknown> | null;
    if (!json || typeof json !== 'object' || json.type !== 'Create' || 'signature' in json || 'proof' in json) return null;
    const actor = idOf(Array.isArray(json.actor) ? json.actor[0] : json.actor);
    const object = idOf(json.object);
    if (!actor || !object || !URL.canParse(object) || keyIdIsActors(keyId, actor)) return null;
    const ctx = federation.createContext(request, undefined);
    // A key named otherwise that the actor owns after all (its key document says so): Fedify's.
    const key = await ctx.getSignedKey().catch(() => null);
    if (key?.ownerId?.href === actor) return null;
    const outcome = await acceptByRefetch(services, ctx, new URL(object), actor, path[1] ? decodeURIComponent(path[1]) : null).catch(() => 'refused' as const);
    return outcome === 'accepted' ? new Response(null, { status: 202 }) : refused('The forwarded object could not be verified at its origin');
  };
}

/** Fedify's onUnverifiedActivity: a Create whose signature failed is taken by re-fetch, or refused. */
export function unverifiedCreateHandler(services: Services) {
  return async (ctx: Context<void> & { request: Request }, activity: Activity): Promise<Response | void> => {
    if (!(activity instanceof Create) || !activity.objectId) return;
    const path = INBOX_PATH.exec(new URL(ctx.request.url).pathname);
    const outcome = await acceptByRefetch(services, ctx, activity.objectId, activity.actorId?.href ?? null, path?.[1] ? decodeURIComponent(path[1]) : null).catch(
      () => 'refused' as const,
    );
    if (outcome === 'accepted') return new Response(null, { status: 202 });
  };
}
