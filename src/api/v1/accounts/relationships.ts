/**
 * Following, muting and the Relationship entity:
 * POST /api/v1/accounts/:id/follow|unfollow|mute|unmute, GET /api/v1/accounts/relationships.
 */
import type { RequestContext, Router } from '../../../http/index.ts';
import { json, paramBool, paramIds, paramInt, paramString, paramStrings, requireId } from '../../../http/index.ts';
import type { Services } from '../../../context.ts';
import { requireUser, type UserViewer } from '../../auth.ts';
import { followAccount, unfollowAccount } from '../../../services/follows.ts';
import {
  blockAccount,
  endorseAccount,
  muteAccount,
  relationshipFacts,
  removeFromFollowers,
  setAccountNote,
  unblockAccount,
  unendorseAccount,
  unmuteAccount,
} from '../../../services/relationships.ts';
import { serializeRelationship } from '../../../serializers/relationship.ts';
import { RoostError } from '../../../lib/errors.ts';

export async function relationshipOf(services: Services, viewer: UserViewer, accountId: string) {
  const facts = await relationshipFacts(services, viewer.account.id, [accountId]);
  const f = facts.get(accountId);
  if (!f) throw new RoostError(404, 'Record not found');
  return serializeRelationship(accountId, f);
}

function targetId(ctx: RequestContext): string {
  return requireId(ctx.params.id);
}

export function accountRelationshipRoutes(router: Router, services: Services): void {
  router.post('/api/v1/accounts/:id/follow', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:follows']);
    const id = targetId(ctx);
    const languages = ctx.input.languages === undefined ? undefined : paramStrings(ctx.input.languages);
    await followAccount(services, viewer.account.id, id, {
      reblogs: paramBool(ctx.input.reblogs),
      notify: paramBool(ctx.input.notify),
      languages: languages === undefined ? undefined : languages.length ? languages : null,
    });
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/unfollow', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:follows']);
    const id = targetId(ctx);
    await unfollowAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/mute', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:mutes']);
    const id = targetId(ctx);
    const raw = ctx.input.duration;
    const duration = raw === undefined || raw === '' ? 0 : paramInt(raw);
    if (duration === undefined) {
      throw new RoostError(422, 'Validation failed: Duration must be a whole number of seconds', {
        details: { duration: [{ error: 'ERR_INVALID', description: 'must be a whole number of seconds' }] },
      });
    }
    await muteAccount(services, viewer.account.id, id, { notifications: paramBool(ctx.input.notifications), duration });
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/unmute', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:mutes']);
    const id = targetId(ctx);
    await unmuteAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/block', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:blocks']);
    const id = targetId(ctx);
    await blockAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/unblock', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:blocks']);
    const id = targetId(ctx);
    await unblockAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  });

  router.post('/api/v1/accounts/:id/note', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['write', 'write:accounts']);
    const id = targetId(ctx);
    await setAccountNote(services, viewer.account.id, id, paramString(ctx.input.comment) ?? '');
    return json(await relationshipOf(services, viewer, id));
  });

  // Featuring an account on one's profile: `endorse`/`unendorse` since Mastodon 4.4, `pin`/`unpin`
  // before (still served by it); one implementation under both names.
  const endorse = async (ctx: RequestContext) => {
    const viewer = await requireUser(services, ctx, ['write', 'write:accounts']);
    const id = targetId(ctx);
    await endorseAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  };
  const unendorse = async (ctx: RequestContext) => {
    const viewer = await requireUser(services, ctx, ['write', 'write:accounts']);
    const id = targetId(ctx);
    await unendorseAccount(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  };
  router.post('/api/v1/accounts/:id/endorse', endorse);
  router.post('/api/v1/accounts/:id/pin', endorse);
  router.post('/api/v1/accounts/:id/unendorse', unendorse);
  router.post('/api/v1/accounts/:id/unpin', unendorse);

  router.post('/api/v1/accounts/:id/remove_from_followers', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:follows']);
    const id = targetId(ctx);
    await removeFromFollowers(services, viewer.account.id, id);
    return json(await relationshipOf(services, viewer, id));
  });

  router.get('/api/v1/accounts/relationships', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:follows']);
    const ids = paramIds(ctx.input.id, 40);
    const facts = await relationshipFacts(services, viewer.account.id, ids);
    // In the order asked, unknown ids left out (as Mastodon does).
    return json(ids.filter((id) => facts.has(id)).map((id) => serializeRelationship(id, facts.get(id)!)));
  });
}
