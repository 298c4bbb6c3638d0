/**
 * /api/v1/tags/:name (Mastodon 4.4's Api::V1::TagsController and Tags::FeaturesController): show a
 * hashtag, follow and unfollow it, feature and unfeature it on one's profile; and
 * /api/v1/followed_tags, the viewer's followed tags with Link headers. A name no hashtag can have
 * is a 404; an unknown but valid one is shown (id "", no history) as Mastodon shows an unsaved tag.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramString } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { notFound } from '../../lib/errors.ts';
import { featureTag, findTag, followTag, tagName, unfeatureTag, unfollowTag } from '../../services/tags.ts';
import { emptyHistory, followedTagsPage, loadTags } from '../../services/reads/tags.ts';
import { serializeTag, type MastodonTag } from '../../serializers/tag.ts';

const FOLLOWS = ['follow', 'write', 'write:follows'];
const WRITE_ACCOUNTS = ['write', 'write:accounts'];

/** Tags by id in the order given (one statement), as the viewer sees them. */
export async function renderTags(services: Services, ids: readonly string[], viewerId: string | null): Promise<MastodonTag[]> {
  const rows = await loadTags(services, ids, viewerId);
  const view = { baseUrl: services.config.publicUrl, signedIn: viewerId !== null };
  return ids.flatMap((id) => {
    const row = rows.get(id);
    return row ? [serializeTag(row, view)] : [];
  });
}

async function renderTag(services: Services, id: string | null, name: string, viewerId: string | null): Promise<MastodonTag> {
  const [found] = id ? await renderTags(services, [id], viewerId) : [];
  if (found) return found;
  const row = { id: '', name, history: emptyHistory(services.clock.now()), following: false, featuring: false };
  return serializeTag(row, { baseUrl: services.config.publicUrl, signedIn: viewerId !== null });
}

const nameOf = (ctx: RequestContext) => paramString(ctx.params.name);

export function tagRoutes(router: Router, services: Services): void {
  router.get('/api/v1/tags/:name', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, ['read', 'read:follows']);
    const name = tagName(nameOf(ctx));
    if (!name) throw notFound();
    const tag = await findTag(services, name);
    return json(await renderTag(services, tag?.id ?? null, tag?.name ?? name, viewer?.account?.id ?? null));
  });

  router.post('/api/v1/tags/:name/follow', async (ctx) => {
    const viewer = await requireUser(services, ctx, FOLLOWS);
    const id = await followTag(services, viewer.account.id, nameOf(ctx));
    return json(await renderTag(services, id, '', viewer.account.id));
  });

  router.post('/api/v1/tags/:name/unfollow', async (ctx) => {
    const viewer = await requireUser(services, ctx, FOLLOWS);
    const id = await unfollowTag(services, viewer.account.id, nameOf(ctx));
    return json(await renderTag(services, id, tagName(nameOf(ctx)) ?? '', viewer.account.id));
  });

  router.post('/api/v1/tags/:name/feature', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_ACCOUNTS);
    if (!tagName(nameOf(ctx))) throw notFound();
    const { tagId } = await featureTag(services, viewer.account.id, nameOf(ctx));
    return json(await renderTag(services, tagId, '', viewer.account.id));
  });

  router.post('/api/v1/tags/:name/unfeature', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_ACCOUNTS);
    const id = await unfeatureTag(services, viewer.account.id, nameOf(ctx));
    return json(await renderTag(services, id, tagName(nameOf(ctx)) ?? '', viewer.account.id));
  });

  router.get('/api/v1/followed_tags', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:follows']);
    const p = pageParams(ctx, 100, 200);
    const page = await followedTagsPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    return json(await renderTags(services, page.tagIds, viewer.account.id), { headers: link ? { link } : {} });
  });
}
