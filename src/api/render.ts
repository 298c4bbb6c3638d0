/**
 * Rendering for routes: a read module's rows through the pure serializers. `renderAccounts` is the
 * one helper for "accounts by ids, in order": one batched view for the page (reads/accounts.ts:
 * one statement whatever the page size), then serializeAccount per account.
 */
import type { Services } from '../context.ts';
import { loadAccountPage, type PageOptions } from '../services/reads/accounts.ts';
import { serializeAccount, type MastodonAccount } from '../serializers/account.ts';
import { loadStatusPage } from '../services/reads/statuses.ts';
import type { FilterContext } from '../serializers/filter.ts';
import { serializeStatus, type MastodonStatus, type SerializeStatusOptions } from '../serializers/status.ts';
import { RoostError } from '../lib/errors.ts';
import { loadStatusHistory } from '../services/reads/status-history.ts';
import { serializeStatusEdit, type MastodonStatusEdit } from '../serializers/status-edit.ts';

/** Accounts by id, in the order given (unknown ids left out, repeats kept). */
export async function renderAccounts(services: Services, ids: readonly string[], opts: PageOptions = {}): Promise<MastodonAccount[]> {
  const { accounts, view } = await loadAccountPage(services, ids, opts);
  const out: MastodonAccount[] = [];
  for (const id of ids) {
    const a = accounts.get(id);
    if (a) out.push(serializeAccount(a, view));
  }
  return out;
}

/** One account rendered, or null when unknown. */
export async function renderAccount(services: Services, id: string, opts: PageOptions = {}): Promise<MastodonAccount | null> {
  return (await renderAccounts(services, [id], opts))[0] ?? null;
}

/**
 * Statuses by id, in the order given (unknown ones left out): one batched status view for the page
 * (reads/statuses.ts loadStatusPage: a fixed number of statements), then serializeStatus each.
 * Callers pass only ids the viewer may see. With a `filterContext` and a viewer, the viewer's
 * filters apply: `hide` leaves the status out, the others fill its `filtered`.
 */
export async function renderStatuses(
  services: Services,
  ids: readonly string[],
  viewerId: string | null,
  opts: SerializeStatusOptions & { filterContext?: FilterContext } = {},
): Promise<MastodonStatus[]> {
  const { statuses, view } = await loadStatusPage(services, ids, viewerId, { filterContext: opts.filterContext });
  const out: MastodonStatus[] = [];
  for (const id of ids) {
    if (view.hidden?.has(id)) continue;
    const s = statuses.get(id);
    const json = s ? serializeStatus(s, statuses, view, opts) : null;
    if (json) out.push(json);
  }
  return out;
}

/** One status rendered, or a 404 when it is not there. */
export async function renderStatus(services: Services, id: string, viewerId: string | null, opts: SerializeStatusOptions = {}): Promise<MastodonStatus> {
  const [json] = await renderStatuses(services, [id], viewerId, opts);
  if (!json) throw new RoostError(404, 'Record not found');
  return json;
}

/** The versions of a status, oldest first (one for a status never edited): three statements (versions, their media, accounts). */
export async function renderStatusHistory(services: Services, statusId: string): Promise<MastodonStatusEdit[]> {
  const { edits, view } = await loadStatusHistory(services, statusId);
  return edits.flatMap((e) => serializeStatusEdit(e, view) ?? []);
}
