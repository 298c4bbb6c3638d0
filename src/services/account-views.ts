/**
 * What the account serializer needs beyond the rows, loaded once for a whole page of accounts in
 * one query: follower/following/status counts, the last status date and the highlighted role
 * (each a correlated sub-select over an index, per id of the page); plus, only when some account
 * of the page moved, the moved-to rows (their counts come in the same batch).
 */
import type { Services } from '../context.ts';
import { AccountSchema, type Account } from '../db/entities/index.ts';
import type { AccountView } from '../serializers/account.ts';
import { handleKey, mentionedHandles, type MentionTarget } from '../lib/text-format.ts';

/**
 * The known accounts that `texts` (local bios and field values, typed as plain text) mention,
 * by handleKey: one query for all of them. Suspended accounts are left out (their mention stays
 * text, as on Mastodon).
 */
export async function mentionTargets(services: Services, texts: readonly string[]): Promise<Map<string, MentionTarget>> {
  const out = new Map<string, MentionTarget>();
  const handles = new Map<string, { username: string; domain: string | null }>();
  for (const t of texts) for (const h of mentionedHandles(t, services.config.domain)) handles.set(handleKey(h.username, h.domain), h);
  if (handles.size === 0) return out;
  const list = [...handles.values()];
  const rows = await services.db.sql.query<{ username: string; domain: string | null; url: string | null; uri: string }>(
    `select a.username, a.domain, a.url, a.uri from accounts a
       join unnest($1::text[], $2::text[]) as h(username, domain)
         on lower(a.username) = lower(h.username) and coalesce(lower(a.domain), '') = lower(h.domain)
      where a.suspended_at is null`,
    [list.map((h) => h.username), list.map((h) => h.domain ?? '')],
  );
  for (const r of rows) out.set(handleKey(r.username, r.domain), { username: r.username, domain: r.domain, url: r.url ?? r.uri });
  return out;
}

/** The plain texts of local accounts that the serializer renders (bios and field values). */
export function localProfileTexts(accounts: readonly Account[]): string[] {
  return accounts.filter((a) => a.domain === null).flatMap((a) => [a.note, ...a.fields.map((f) => f.value)]);
}

interface ViewRow {
  id: string;
  followers: number;
  following: number;
  statuses: number;
  last_status_at: Date | string | null;
  role_id: string | null;
  role_name: string | null;
  role_color: string | null;
}

export async function accountView(services: Services, accounts: readonly Account[]): Promise<AccountView> {
  const view: Required<AccountView> = {
    baseUrl: services.config.publicUrl,
    localDomain: services.config.domain,
    counts: new Map(),
    roles: new Map(),
    accounts: new Map(),
    mentions: new Map(),
  };
  if (accounts.length === 0) return view;
  // Moved-to accounts are shown nested (one level), with their own counts: in the same batch.
  const movedIds = [...new Set(accounts.map((a) => a.movedToAccountId).filter((id): id is string => !!id))];
  const ids = [...new Set([...accounts.map((a) => a.id), ...movedIds])];
  const [rows, moved, mentions] = await Promise.all([
    services.db.sql.query<ViewRow>(
      `select a.id::text as id,
              (select count(*) from follows f where f.target_account_id = a.id and f.state = 'accepted')::int as followers,
              (select count(*) from follows f where f.account_id = a.id and f.state = 'accepted')::int as following,
              (select count(*) from statuses s where s.account_id = a.id and s.deleted_at is null)::int as statuses,
              (select max(s.created_at) from statuses s where s.account_id = a.id and s.deleted_at is null) as last_status_at,
              r.id::text as role_id, r.name as role_name, r.color as role_color
         from unnest($1::bigint[]) as a(id)
         left join users u on u.account_id = a.id
         left join user_roles r on r.id = u.role_id and r.highlighted`,
      [ids],
    ),
    movedIds.length > 0 ? services.db.em().find(AccountSchema, { id: { $in: movedIds } }) : Promise.resolve([]),
    mentionTargets(services, localProfileTexts(accounts)),
  ]);
  view.mentions = mentions;
  for (const r of rows) {
    view.counts.set(r.id, {
      followers: r.followers,
      following: r.following,
      statuses: r.statuses,
      lastStatusAt: r.last_status_at ? new Date(r.last_status_at) : null,
    });
    view.roles.set(r.id, r.role_id ? [{ id: r.role_id, name: r.role_name ?? '', color: r.role_color ?? '' }] : []);
  }
  for (const m of moved) view.accounts.set(m.id, m);
  return view;
}

/** What a local account's actor document needs for its HTML (federation/convert/to-as.ts). */
export async function actorProfileFacts(services: Services, account: Account): Promise<{ localDomain: string; mentions: Map<string, MentionTarget> }> {
  return { localDomain: services.config.domain, mentions: await mentionTargets(services, localProfileTexts([account])) };
}
