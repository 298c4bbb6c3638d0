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
import { accountEmojiShortcodes, emojiFacts, loadEmojisFor } from './reads/emojis.ts';

export { localProfileTexts, mentionTargets };

export async function accountView(services: Services, accounts: readonly Account[]): Promise<AccountView> {
  return (await loadAccountPage(services, accounts.map((a) => a.id))).view;
}

/** What a local account's actor document needs for its HTML (federation/convert/to-as.ts). */
export async function actorProfileFacts(
  services: Services,
  account: Account,
): Promise<{ localDomain: string; mentions: Map<string, MentionTarget>; emojis: ReturnType<typeof emojiFacts>[] }> {
  const [mentions, emojis] = await Promise.all([
    mentionTargets(services, localProfileTexts([account])),
    loadEmojisFor(services, [{ owner: account.id, domain: null, shortcodes: accountEmojiShortcodes(account) }]),
  ]);
  return { localDomain: services.config.domain, mentions, emojis: (emojis.get(account.id) ?? []).map((e) => emojiFacts(services, e)) };
}
