/**
 * GET /api/v1/custom_emojis (public): the local emojis of the picker — enabled and visible in it —
 * with their category. Operators manage them with `roost emojis …` (Mastodon has no public API
 * for that).
 */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { listedEmojis } from '../../services/reads/emojis.ts';
import { mediaStorage } from '../../services/media-storage.ts';
import { serializeCustomEmoji } from '../../serializers/custom-emoji.ts';

export function customEmojiRoutes(router: Router, services: Services): void {
  router.get('/api/v1/custom_emojis', async () => {
    const base = mediaStorage(services).baseUrl;
    return json((await listedEmojis(services)).map((e) => serializeCustomEmoji(e, base)));
  });
}
