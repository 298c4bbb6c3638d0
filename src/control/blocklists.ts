/**
 * `roost blocklists …` (subscriptions to published blocklists: services/blocklists.ts) and
 * `roost domains export`, run in the server process or the CLI's (./commands.ts). The operator
 * acts as nobody's account (the audit log's null actor).
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { serializeBlocklistEntry, serializeBlocklistSubscription, serializeRefreshSummary } from '../serializers/admin-blocklists.ts';
import {
  allBlocklistSubscriptions,
  approveBlocklistEntry,
  blocklistEntriesPage,
  createBlocklistSubscription,
  deleteBlocklistSubscription,
  exportDomainBlocksCsv,
  refreshBlocklist,
  rejectBlocklistEntry,
} from '../services/blocklists.ts';

type Args = Record<string, unknown>;

function id(args: Args, what: string): string {
  const v = args.id;
  if (typeof v !== 'string' || !/^\d{1,19}$/.test(v)) throw new RoostError(404, `No ${what} ${String(v)}`);
  return v;
}

/** A 404 of the use case, said with what was looked for. */
async function named<T>(what: string, args: Args, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof RoostError && e.status === 404) throw new RoostError(404, `No ${what} ${String(args.id)}`);
    throw e;
  }
}

export const BLOCKLIST_COMMANDS = {
  async 'blocklists.list'(services: Services) {
    return { subscriptions: (await allBlocklistSubscriptions(services)).map(serializeBlocklistSubscription) };
  },
  async 'blocklists.subscribe'(services: Services, args: Args) {
    const url = typeof args.url === 'string' ? args.url : '';
    const row = await createBlocklistSubscription(services, { url, autoApply: args.autoApply === true }, null);
    return { subscription: serializeBlocklistSubscription(row) };
  },
  async 'blocklists.unsubscribe'(services: Services, args: Args) {
    const row = await named('subscription', args, () => deleteBlocklistSubscription(services, id(args, 'subscription'), { retract: args.retract === true }, null));
    return { subscription: serializeBlocklistSubscription(row) };
  },
  async 'blocklists.refresh'(services: Services, args: Args) {
    const summary = await refreshBlocklist(services, id(args, 'subscription'), 'operator');
    if (!summary) throw new RoostError(404, `No subscription ${String(args.id)}`);
    return { summary: serializeRefreshSummary(summary) };
  },
  async 'blocklists.pending'(services: Services) {
    const rows = await blocklistEntriesPage(services, { maxId: null, sinceId: null, minId: null, limit: 1000 }, { state: 'pending' });
    return { entries: rows.map(serializeBlocklistEntry) };
  },
  async 'blocklists.approve'(services: Services, args: Args) {
    return { entry: serializeBlocklistEntry(await named('entry', args, () => approveBlocklistEntry(services, id(args, 'entry'), null))) };
  },
  async 'blocklists.reject'(services: Services, args: Args) {
    return { entry: serializeBlocklistEntry(await named('entry', args, () => rejectBlocklistEntry(services, id(args, 'entry'), null))) };
  },
  async 'domains.export'(services: Services) {
    return { csv: await exportDomainBlocksCsv(services) };
  },
};
