/**
 * Accounts rendered (src/views/: a read module's rows through the pure serializers): "accounts by
 * ids, in order" is one batched view for the page (reads/accounts.ts: one statement whatever the
 * page size), then serializeAccount per account.
 */
import type { Services } from '../context.ts';
import { loadAccountPage, type PageOptions } from '../services/reads/accounts.ts';
import { serializeAccount, type MastodonAccount } from '../serializers/account.ts';

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
