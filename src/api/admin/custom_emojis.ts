/**
 * /api/v1/admin/custom_emojis (Roost's: Mastodon manages emojis in its web interface only): list
 * (Link headers), show, upload (multipart `shortcode`, `image`, `category`, `visible_in_picker`),
 * change (`category` by name, `category_id`, `visible_in_picker`, `disabled`) and remove the local
 * custom emojis. A user's token with admin:read / admin:write and a role that may manage custom
 * emojis (Owner, Admin). `roost emojis …` does the same from the CLI.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { addCustomEmoji, removeCustomEmoji, updateCustomEmoji } from '../../services/custom-emojis.ts';
import { adminEmoji, adminEmojisPage } from '../../services/reads/emojis.ts';
import { mediaStorage } from '../../services/media-storage.ts';
import { serializeAdminCustomEmoji } from '../../serializers/custom-emoji.ts';

const READ = ['admin:read'];
const WRITE = ['admin:write'];

async function render(services: Services, id: string) {
  const row = await adminEmoji(services, id);
  if (!row) throw new RoostError(404, 'Record not found');
  return json(serializeAdminCustomEmoji(row, mediaStorage(services).baseUrl));
}

function categoryParam(ctx: RequestContext): string | null | undefined {
  const v = ctx.input.category;
  if (v === undefined) return undefined;
  return paramString(v) ?? null;
}

export function adminCustomEmojiRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/custom_emojis', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageCustomEmojis');
    const p = pageParams(ctx, 100, 200);
    const rows = await adminEmojisPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    const base = mediaStorage(services).baseUrl;
    return json(rows.map((r) => serializeAdminCustomEmoji(r, base)), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/admin/custom_emojis/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageCustomEmojis');
    return render(services, requireId(ctx.params.id));
  });

  router.post('/api/v1/admin/custom_emojis', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageCustomEmojis');
    const f = ctx.files.image;
    const file = Array.isArray(f) ? f[0] : f;
    if (!file) throw new RoostError(422, "Validation failed: Image can't be blank", { details: { image: [{ error: 'ERR_BLANK', description: "can't be blank" }] } });
    const id = await addCustomEmoji(services, {
      shortcode: paramString(ctx.input.shortcode) ?? '',
      data: file,
      category: categoryParam(ctx) ?? null,
      visibleInPicker: paramBool(ctx.input.visible_in_picker) ?? true,
    }, me.account.id);
    return render(services, id);
  });

  router.update('/api/v1/admin/custom_emojis/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageCustomEmojis');
    const id = requireId(ctx.params.id);
    const categoryId = ctx.input.category_id === undefined ? undefined : (paramString(ctx.input.category_id) ?? '');
    await updateCustomEmoji(services, { id }, {
      category: categoryId === undefined ? categoryParam(ctx) : undefined,
      categoryId,
      visibleInPicker: paramBool(ctx.input.visible_in_picker),
      disabled: paramBool(ctx.input.disabled),
    }, me.account.id);
    return render(services, id);
  });

  router.delete('/api/v1/admin/custom_emojis/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageCustomEmojis');
    await removeCustomEmoji(services, { id: requireId(ctx.params.id) }, me.account.id);
    return json({});
  });
}
