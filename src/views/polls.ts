/**
 * A poll rendered on its own (GET /api/v1/polls/:id and a vote's answer): the poll with the
 * viewer's votes if the viewer may see its status (reads/polls.ts), the custom emojis its options
 * use (none asked when they name none), then serializePoll. In a status the poll comes with the
 * status view (views/statuses.ts).
 */
import type { Services } from '../context.ts';
import { findVisiblePoll } from '../services/reads/polls.ts';
import { emojisOfPoll } from '../services/reads/emojis.ts';
import { mediaStorage } from '../services/media-storage.ts';
import { serializeCustomEmoji } from '../serializers/custom-emoji.ts';
import { serializePoll, type MastodonPoll } from '../serializers/poll.ts';

/** The poll `id` as the viewer sees it, or null when it may not see it (or there is none). */
export async function renderPoll(services: Services, id: string, viewerId: string | null): Promise<MastodonPoll | null> {
  const poll = await findVisiblePoll(services, id, viewerId);
  if (!poll) return null;
  const emojis = (await emojisOfPoll(services, poll)).map((e) => serializeCustomEmoji(e, mediaStorage(services).baseUrl));
  return serializePoll(poll, viewerId, services.clock.now(), emojis);
}
