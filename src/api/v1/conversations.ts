/**
 * /api/v1/conversations: the viewer's direct-message conversations (methods/conversations.md):
 * the list (20 by default, 40 at most, newest last status first; the Link header pages by that
 * status's id, as Mastodon), mark one read or unread (4.2), remove one (for the viewer only). Kept up to date by
 * effects/conversations.ts from the committed statuses, local and remote.
 */
import type { Router } from '../../http/index.ts';
import { json, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { conversationsPage, findConversation } from '../../services/reads/account-conversations.ts';
import { markConversationRead, markConversationUnread, removeConversation } from '../../services/account-conversations.ts';
import { renderConversations } from '../../views/conversations.ts';

const READ = ['read', 'read:statuses'];
const WRITE = ['write', 'write:conversations'];

export function conversationRoutes(router: Router, services: Services): void {
  router.get('/api/v1/conversations', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const p = pageParams(ctx, 20, 40);
    const rows = await conversationsPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.cursor), p);
    return json(await renderConversations(services, rows, viewer.account.id), { headers: link ? { link } : {} });
  });

  for (const [action, mark] of [['read', markConversationRead], ['unread', markConversationUnread]] as const) {
    router.post(`/api/v1/conversations/:id/${action}`, async (ctx) => {
      const viewer = await requireUser(services, ctx, WRITE);
      const id = requireId(ctx.params.id);
      await mark(services, viewer.account.id, id);
      const row = await findConversation(services, viewer.account.id, id);
      if (!row) throw new RoostError(404, 'Record not found');
      return json((await renderConversations(services, [row], viewer.account.id))[0]);
    });
  }

  router.delete('/api/v1/conversations/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    await removeConversation(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
