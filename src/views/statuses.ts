/**
 * Statuses rendered, the one rendering routes and streaming share: one batched status view for
 * the page (reads/statuses.ts loadStatusPage: a fixed number of statements), then serializeStatus
 * each. With no viewer it is the public rendering streaming sends (Mastodon's InlineRenderer:
 * no viewer flags). A status's versions: reads/status-history.ts, then serializeStatusEdit.
 */
import type { Services } from '../context.ts';
import { loadStatusPage } from '../services/reads/statuses.ts';
import { loadStatusHistory } from '../services/reads/status-history.ts';
import type { FilterContext } from '../serializers/filter.ts';
import { serializeStatus, type MastodonStatus, type SerializeStatusOptions, type StatusRow, type StatusView } from '../serializers/status.ts';
import { serializeStatusEdit, type MastodonStatusEdit } from '../serializers/status-edit.ts';
import { RoostError } from '../lib/errors.ts';

/**
 * Statuses by id, in the order given (unknown ones left out). Callers pass only ids the viewer
 * may see. With a `filterContext` and a viewer, the viewer's filters apply: `hide` leaves the
 * status out, the others fill its `filtered`.
 */
export async function renderStatuses(
  services: Services,
  ids: readonly string[],
  viewerId: string | null,
  opts: SerializeStatusOptions & { filterContext?: FilterContext | 'any' } = {},
): Promise<MastodonStatus[]> {
  const rendered = statusesOfPage(await loadStatusPage(services, ids, viewerId, { filterContext: opts.filterContext }), ids, opts);
  return ids.flatMap((id) => rendered.get(id) ?? []);
}

/**
 * The statuses `ids` of a loaded page (loadStatusPage) serialized, by id: those missing and those
 * a `hide` filter removes left out. For a view that loads statuses with more (notifications).
 */
export function statusesOfPage(
  page: { statuses: ReadonlyMap<string, StatusRow>; view: StatusView },
  ids: readonly string[],
  opts: SerializeStatusOptions = {},
): Map<string, MastodonStatus> {
  const out = new Map<string, MastodonStatus>();
  for (const id of ids) {
    if (page.view.hidden?.has(id)) continue;
    const s = page.statuses.get(id);
    const json = s ? serializeStatus(s, page.statuses, page.view, opts) : null;
    if (json) out.set(id, json);
  }
  return out;
}

/** One status rendered, or a 404 when it is not there. */
export async function renderStatus(services: Services, id: string, viewerId: string | null, opts: SerializeStatusOptions & { filterContext?: 'any' } = {}): Promise<MastodonStatus> {
  const [json] = await renderStatuses(services, [id], viewerId, opts);
  if (!json) throw new RoostError(404, 'Record not found');
  return json;
}

/** The versions of a status, oldest first (one for a status never edited): three statements (versions, their media, accounts). */
export async function renderStatusHistory(services: Services, statusId: string): Promise<MastodonStatusEdit[]> {
  const { edits, view } = await loadStatusHistory(services, statusId);
  return edits.flatMap((e) => serializeStatusEdit(e, view) ?? []);
}
