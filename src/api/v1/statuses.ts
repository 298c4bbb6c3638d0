/**
 * /api/v1/statuses: post, edit (and its history), read (one, many, the thread around one, its
 * source), delete, favourite, reblog, bookmark, pin, mute the thread, and who favourited or
 * reblogged. Whatever the viewer may not see is a 404 (reads/statuses.ts visibleSql). Scopes as
 * Mastodon's docs (methods/statuses.md).
 */
import { translateStatus, TranslationUnavailable } from '../../services/translation.ts';
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramArray, paramBool, paramIds, paramInt, paramString, paramStrings, requireId, type ParamValue } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser, type UserViewer } from '../auth.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { renderStatus, renderStatusHistory, renderStatuses } from '../../views/statuses.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { findVisibleStatus, statusActorsPage, statusContext, statusSource, visibleStatusIds } from '../../services/reads/statuses.ts';
import {
  createStatus,
  deleteStatus,
  favouriteStatus,
  pinStatus,
  reblogStatus,
  setBookmark,
  unfavouriteStatus,
  unpinStatus,
  unreblogStatus,
  type StatusAuthor,
} from '../../services/statuses.ts';
import { editStatus } from '../../services/status-edits.ts';
import { scheduleStatus } from '../../services/scheduled-statuses.ts';
import { renderScheduledStatus } from './scheduled_statuses.ts';
import { setConversationMute } from '../../services/conversations.ts';
import { checkQuotePolicy, revokeQuote, setQuotePolicy } from '../../services/quotes.ts';
import { statusQuotesPage } from '../../services/reads/quotes.ts';
import { openThread } from '../../services/threads.ts';
import { threadCompleteness } from '../../services/reads/threads.ts';

/** The `retry` of a thread's Mastodon-Async-Refresh header: seconds a client waits before asking again (Mastodon's 3). */
const THREAD_REFRESH_RETRY_SECONDS = 3;

const READ = ['read', 'read:statuses'];
const WRITE = ['write', 'write:statuses'];
const FAVOURITES = ['write', 'write:favourites'];
const BOOKMARKS = ['write', 'write:bookmarks'];
const PINS = ['write', 'write:accounts'];
const MUTES = ['write', 'write:mutes'];
/** Mastodon's cap on GET /api/v1/statuses?id[]=. */
const MAX_MANY = 20;

function authorOf(viewer: UserViewer): StatusAuthor {
  return { account: viewer.account, user: viewer.user, applicationId: viewer.token.applicationId ?? null };
}

/** A status id the viewer may see, or 404. */
async function visibleId(services: Services, ctx: RequestContext, viewerId: string | null): Promise<string> {
  const s = await findVisibleStatus(services, requireId(ctx.params.id), viewerId);
  if (!s) throw new RoostError(404, 'Record not found');
  return s.id;
}

/**
 * `poll[options][]`, `poll[expires_in]`, `poll[multiple]`, `poll[hide_totals]` (nested by
 * src/http/params), or null without options. A missing or non-numeric expires_in is out of range.
 */
function pollParams(value: ParamValue | undefined): { options: string[]; expiresIn: number; multiple?: boolean; hideTotals?: boolean } | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const options = paramStrings(value.options);
  if (options.length === 0 && value.options === undefined) return null;
  return {
    options,
    expiresIn: paramInt(value.expires_in) ?? Number.NaN,
    multiple: paramBool(value.multiple),
    hideTotals: paramBool(value.hide_totals),
  };
}

/** `media_attributes[][id|description|focus]` (an edit's), the entries with an id. */
function mediaAttributesParam(value: ParamValue | undefined): { id: string; description?: string; focus?: string }[] {
  const out: { id: string; description?: string; focus?: string }[] = [];
  for (const entry of paramArray(value)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const id = paramString(entry.id);
    if (id === undefined) continue;
    out.push({ id: id.trim(), description: paramString(entry.description), focus: paramString(entry.focus) });
  }
  return out;
}

export function statusRoutes(router: Router, services: Services): void {
  router.post('/api/v1/statuses', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const input = ctx.input;
    const statusInput = {
      status: paramString(input.status),
      spoilerText: paramString(input.spoiler_text),
      sensitive: paramBool(input.sensitive),
      visibility: paramString(input.visibility),
      language: paramString(input.language) ?? null,
      inReplyToId: paramString(input.in_reply_to_id) || null,
      mediaIds: paramStrings(input.media_ids),
      poll: pollParams(input.poll),
      idempotencyKey: ctx.header('idempotency-key'),
      quotedStatusId: paramString(input.quoted_status_id) || null,
      quoteApprovalPolicy: paramString(input.quote_approval_policy),
    };
    // With `scheduled_at`: a ScheduledStatus (services/scheduled-statuses.ts), unless the time is past.
    const scheduledAt = input.scheduled_at;
    if (scheduledAt !== undefined && scheduledAt !== null && scheduledAt !== '') {
      // Not a string (an array, a hash): an invalid time, a 422.
      const r = await scheduleStatus(services, authorOf(viewer), statusInput, paramString(scheduledAt) ?? '');
      if ('scheduledStatusId' in r) return json(await renderScheduledStatus(services, viewer.account.id, r.scheduledStatusId));
      return json(await renderStatus(services, r.statusId, viewer.account.id));
    }
    const id = await createStatus(services, authorOf(viewer), statusInput);
    return json(await renderStatus(services, id, viewer.account.id));
  });

  router.get('/api/v1/statuses', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const viewerId = viewer?.account?.id ?? null;
    const ids = paramIds(ctx.query.id, MAX_MANY);
    // As Mastodon: every filter of the viewer's that matches fills `filtered`, whatever its context; none hides.
    return json(await renderStatuses(services, await visibleStatusIds(services, ids, viewerId), viewerId, { filterContext: 'any' }));
  });

  router.get('/api/v1/statuses/:id', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const viewerId = viewer?.account?.id ?? null;
    return json(await renderStatus(services, await visibleId(services, ctx, viewerId), viewerId, { filterContext: 'any' }));
  });

  router.delete('/api/v1/statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const id = requireId(ctx.params.id);
    const s = await findVisibleStatus(services, id, viewer.account.id);
    if (!s || s.accountId !== viewer.account.id) throw new RoostError(404, 'Record not found');
    // Rendered before it goes, with its source text (Mastodon's source_requested).
    const rendered = await renderStatus(services, id, viewer.account.id, { source: true });
    await deleteStatus(services, viewer.account.id, id, { deleteMedia: paramBool(ctx.input.delete_media ?? ctx.query.delete_media, false) });
    return json(rendered);
  });

  // Only the author's own status (others' are a 404, as Mastodon); the PUT replaces text, content warning and sensitivity.
  router.put('/api/v1/statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const input = ctx.input;
    // Mastodon 4.5: an edit may change who may quote the post (checked before anything is written).
    const quotePolicy = paramString(input.quote_approval_policy);
    if (quotePolicy !== undefined && quotePolicy !== '') checkQuotePolicy(quotePolicy);
    const id = await editStatus(services, viewer.account.id, requireId(ctx.params.id), {
      status: paramString(input.status),
      spoilerText: paramString(input.spoiler_text),
      sensitive: paramBool(input.sensitive),
      language: paramString(input.language) ?? null,
      mediaIds: paramStrings(input.media_ids),
      mediaAttributes: mediaAttributesParam(input.media_attributes),
      poll: pollParams(input.poll),
    });
    if (quotePolicy !== undefined && quotePolicy !== '') await setQuotePolicy(services, viewer.account.id, id, quotePolicy);
    return json(await renderStatus(services, id, viewer.account.id));
  });

  router.get('/api/v1/statuses/:id/history', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    return json(await renderStatusHistory(services, await visibleId(services, ctx, viewer?.account?.id ?? null)));
  });

  router.get('/api/v1/statuses/:id/context', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const viewerId = viewer?.account?.id ?? null;
    const s = await findVisibleStatus(services, requireId(ctx.params.id), viewerId);
    if (!s) throw new RoostError(404, 'Record not found');
    const thread = await statusContext(services, s, viewerId);
    // The viewer's `thread` filters apply: a hidden status leaves its side of the split.
    const rendered = await renderStatuses(services, [...thread.ancestors, ...thread.descendants], viewerId, { filterContext: 'thread' });
    const ancestors = new Set(thread.ancestors);
    // What the thread's servers hold and this one does not is fetched in the background
    // (services/threads.ts): Mastodon 4.5's async refresh header while that runs, and Roost's
    // `roost_completeness` (an extra key Mastodon clients ignore): what is known here against what
    // the servers report, and which could not be reached.
    const { rootId, refresh } = await openThread(services, s.id, viewerId);
    const completeness = await threadCompleteness(services, rootId);
    const headers: Record<string, string> = refresh
      ? { 'mastodon-async-refresh': `id="${refresh.id}", retry=${THREAD_REFRESH_RETRY_SECONDS}, result_count=${refresh.result_count}` }
      : {};
    return json(
      {
        ancestors: rendered.filter((st) => ancestors.has(st.id)),
        descendants: rendered.filter((st) => !ancestors.has(st.id)),
        roost_completeness: { ...completeness, refreshing: refresh !== null },
      },
      { headers },
    );
  });

  router.get('/api/v1/statuses/:id/source', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const source = await statusSource(services, await visibleId(services, ctx, viewer.account.id));
    if (!source) throw new RoostError(404, 'Record not found');
    return json(source);
  });

  // Translation (methods/statuses.md#translate) through the configured LibreTranslate-compatible
  // server (services/translation.ts): a status that may not be translated (private, direct) is a
  // 403, one the viewer cannot see 404; no server, or one that fails, Mastodon's 503.
  router.post('/api/v1/statuses/:id/translate', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const s = await findVisibleStatus(services, requireId(ctx.params.id), viewer.account.id);
    if (!s) throw new RoostError(404, 'Record not found');
    if (s.visibility !== 'public' && s.visibility !== 'unlisted') throw new RoostError(403, 'This action is not allowed');
    const lang = paramString(ctx.input.lang)?.trim();
    const target = lang && /^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})?$/.test(lang) ? lang : (viewer.user.locale ?? 'en');
    try {
      const translated = await translateStatus(services, s.reblogOfId ?? s.id, target);
      if (!translated) throw new RoostError(404, 'Record not found');
      return json(translated);
    } catch (e) {
      if (e instanceof TranslationUnavailable) throw new RoostError(503, 'Service Unavailable');
      throw e;
    }
  });

  const action = (name: string, scopes: string[], run: (viewer: UserViewer, id: string, ctx: RequestContext) => Promise<string>) => {
    router.post(`/api/v1/statuses/:id/${name}`, async (ctx) => {
      const viewer = await requireUser(services, ctx, scopes);
      const id = await run(viewer, requireId(ctx.params.id), ctx);
      return json(await renderStatus(services, id, viewer.account.id));
    });
  };
  action('favourite', FAVOURITES, (v, id) => favouriteStatus(services, v.account.id, id));
  action('unfavourite', FAVOURITES, (v, id) => unfavouriteStatus(services, v.account.id, id));
  action('reblog', WRITE, (v, id, ctx) => reblogStatus(services, authorOf(v), id, paramString(ctx.input.visibility)));
  action('unreblog', WRITE, (v, id) => unreblogStatus(services, v.account.id, id));
  action('bookmark', BOOKMARKS, (v, id) => setBookmark(services, v.account.id, id, true));
  action('unbookmark', BOOKMARKS, (v, id) => setBookmark(services, v.account.id, id, false));
  action('pin', PINS, (v, id) => pinStatus(services, v.account.id, id));
  action('unpin', PINS, (v, id) => unpinStatus(services, v.account.id, id));
  action('mute', MUTES, (v, id) => setConversationMute(services, v.account.id, id, true));
  action('unmute', MUTES, (v, id) => setConversationMute(services, v.account.id, id, false));

  // Quote posts (Mastodon 4.5): the accepted quotes of a status the viewer may see, newest first;
  // its author revokes one; its author changes who may quote it.
  router.get('/api/v1/statuses/:id/quotes', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const id = await visibleId(services, ctx, viewer.account.id);
    const p = pageParams(ctx);
    const page = await statusQuotesPage(services, id, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    return json(await renderStatuses(services, page.statusIds, viewer.account.id, { filterContext: 'thread' }), { headers: link ? { link } : {} });
  });

  router.post('/api/v1/statuses/:id/quotes/:quoting_status_id/revoke', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const id = await revokeQuote(services, viewer.account.id, requireId(ctx.params.id), requireId(ctx.params.quoting_status_id));
    return json(await renderStatus(services, id, viewer.account.id));
  });

  router.put('/api/v1/statuses/:id/interaction_policy', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const id = await setQuotePolicy(services, viewer.account.id, requireId(ctx.params.id), paramString(ctx.input.quote_approval_policy));
    return json(await renderStatus(services, id, viewer.account.id));
  });

  for (const which of ['favourited_by', 'reblogged_by'] as const) {
    router.get(`/api/v1/statuses/:id/${which}`, async (ctx) => {
      const viewer = await authorizeIfGotToken(services, ctx, READ);
      const id = await visibleId(services, ctx, viewer?.account?.id ?? null);
      const p = pageParams(ctx);
      const page = await statusActorsPage(services, id, which, p);
      const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
      return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
    });
  }
}
