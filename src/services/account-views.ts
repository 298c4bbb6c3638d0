/**
 * What the account serializer needs beyond the rows, for accounts already loaded: counters from
 * the stats row, the highlighted role, and the moved-to accounts — one query for the whole page
 * (see reads/accounts.ts, which loads the rows in the same statement when it has only ids).
 */
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import type { AccountView } from '../serializers/account.ts';
import { loadAccountPage } from './reads/accounts.ts';

export async function accountView(services: Services, accounts: readonly Account[]): Promise<AccountView> {
  return (await loadAccountPage(services, accounts.map((a) => a.id))).view;
}
