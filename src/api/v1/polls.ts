/**
 * /api/v1/polls (methods/polls.md): view a poll (whoever may see its status; 404 otherwise) and
 * vote on it (`choices[]`, write:statuses). Refused votes are Mastodon's 422s (services/polls.ts).
 */
import type { Router } from '../../http/index.ts';
import { HttpError, json, paramArray, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { findVisiblePoll } from '../../services/reads/polls.ts';
import { votePoll } from '../../services/polls.ts';
import { renderPoll } from '../../views/polls.ts';

const READ = ['read', 'read:statuses'];
const WRITE = ['write', 'write:statuses'];

/** `choices[]` as option indexes: missing → 400 (Rails' params.require), not integers → 422. */
function parseChoices(value: Parameters<typeof paramArray>[0]): number[] {
  const raw = paramArray(value).map((v) => paramString(v));
  if (raw.length === 0 || raw.every((v) => v === undefined || v === '')) throw new HttpError(400, 'param is missing or the value is empty: choices');
  return raw.map((v) => {
    if (v === undefined || !/^\s*[+-]?\d{1,9}\s*$/.test(v)) throw new RoostError(422, 'Validation failed: The chosen vote option does not exist');
    return Number.parseInt(v, 10);
  });
}

export function pollRoutes(router: Router, services: Services): void {
  const render = async (id: string, viewerId: string | null) => {
    const poll = await renderPoll(services, id, viewerId);
    if (!poll) throw new RoostError(404, 'Record not found');
    return poll;
  };

  router.get('/api/v1/polls/:id', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    return json(await render(requireId(ctx.params.id), viewer?.account?.id ?? null));
  });

  router.post('/api/v1/polls/:id/votes', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const id = requireId(ctx.params.id);
    // Only a poll the voter may see can be voted on.
    if (!(await findVisiblePoll(services, id, viewer.account.id))) throw new RoostError(404, 'Record not found');
    await votePoll(services, viewer.account.id, id, parseChoices(ctx.input.choices));
    return json(await render(id, viewer.account.id));
  });
}
