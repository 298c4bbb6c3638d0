/**
 * What the account serializer needs beyond the rows, for accounts already loaded: counters from
 * the stats row, the highlighted role, and the moved-to accounts — one query for the whole page
 * (see reads/accounts.ts, which loads the rows in the same statement when it has only ids).
 */
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import type { AccountView } from '../serializers/account.ts';
import { loadAccountPage } from './reads/accounts.ts';
import { localProfileTexts, mentionTargets } from './reads/mentions.ts';
import type { MentionTarget } from '../lib/text-format.ts';

export { localProfileTexts, mentionTargets };

export async function accountView(services: Services, accounts: readonly Account[]): Promise<AccountView> {
  return (await loadAccountPage(services, accounts.map((a) => a.id))).view;
}

/** What a local account's actor document needs for its HTML (federation/convert/to-as.ts). */
export async function actorProfileFacts(services: Services, account: Account): Promise<{ localDomain: string; mentions: Map<string, MentionTarget> }> {
  return { localDomain: services.config.domain, mentions: await mentionTargets(services, localProfileTexts([account])) };
}
