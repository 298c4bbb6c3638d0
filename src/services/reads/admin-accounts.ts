/**
 * The admin side of accounts (Mastodon's Admin::Account): what moderators see of an account
 * beyond its public face — the user's e-mail, addresses, role, gates and the moderation flags —
 * and the filtered, paged list of `GET /api/v1|v2/admin/accounts` (Mastodon's AccountFilter).
 *
 * `loadAdminAccounts` is ONE statement for any number of accounts, the public Account's rows
 * included (the addresses aggregated per user in a lateral subquery); `adminAccountPage` is one
 * statement returning the page's ids.
 */
import type { Services } from '../../context.ts';
import { PERMISSIONS } from '../../db/entities/index.ts';
import { prepared } from '../../db/prepared.ts';
import { isId, pageSql, type PageParams } from './page.ts';
import { ACCOUNT_PAGE_JOINS, accountPageColumns, accountPageFromRows, accountPageWhere, type AccountPage } from './accounts.ts';

export interface AdminAccountRole {
  id: string;
  name: string;
  color: string;
  permissions: string;
  highlighted: boolean;
  position: number;
}

export interface AdminAccountFacts {
  id: string;
  username: string;
  domain: string | null;
  createdAt: Date;
  silenced: boolean;
  suspended: boolean;
  sensitized: boolean;
  /** Null for a remote account (no user). */
  user: {
    email: string;
    locale: string | null;
    signUpReason: string | null;
    confirmed: boolean;
    approved: boolean;
    disabled: boolean;
    createdByApplicationId: string | null;
    invitedByAccountId: string | null;
    /** Null: no role (Mastodon's implicit "everyone" role). */
    role: AdminAccountRole | null;
    /** Newest use first. */
    ips: { ip: string; usedAt: Date }[];
  } | null;
}

/**
 * One statement: the public Account's columns (reads/accounts.ts, the same joins) and the admin
 * facts beside them — the user, its role whole, its addresses aggregated in a lateral subquery.
 */
function adminPageSql(ids: string, visibleOnly: string): string {
  return `select ${accountPageColumns(ids, visibleOnly)}, a.sensitized_at is not null as sensitized,
          u.id::text as u_id, u.email as u_email, u.locale as u_locale, u.sign_up_reason as u_reason,
          u.confirmed_at is not null as u_confirmed, u.approved as u_approved, u.disabled as u_disabled,
          u.created_by_application_id::text as u_app_id, u.invited_by_account_id::text as u_invited_by,
          fr.id::text as fr_id, fr.name as fr_name, fr.color as fr_color, fr.permissions::text as fr_permissions,
          fr.highlighted as fr_highlighted, fr.position as fr_position,
          coalesce(ips.list, '[]'::jsonb) as u_ips
     from ${ACCOUNT_PAGE_JOINS}
     left join user_roles fr on fr.id = u.role_id
     left join lateral (
       select jsonb_agg(jsonb_build_object('ip', host(x.ip), 'used_at', x.used_at) order by x.used_at desc, x.ip) as list
         from user_ips x where x.user_id = u.id
     ) ips on u.id is not null
    where ${accountPageWhere(ids)}`;
}

const ADMIN_PAGE_SQL = prepared(adminPageSql('$1::bigint[]', '$2::boolean'));

type Row = Record<string, unknown>;

function factsFromRow(r: Row): AdminAccountFacts {
  const ips = (typeof r.u_ips === 'string' ? JSON.parse(r.u_ips) : r.u_ips) as { ip: string; used_at: string }[];
  return {
    id: r.id as string,
    username: r.username as string,
    domain: (r.domain as string | null) ?? null,
    createdAt: new Date(r.created_at as string),
    silenced: r.silenced_at != null,
    suspended: r.suspended_at != null,
    sensitized: !!r.sensitized,
    user:
      r.u_id == null
        ? null
        : {
            email: r.u_email as string,
            locale: (r.u_locale as string | null) ?? null,
            signUpReason: (r.u_reason as string | null) ?? null,
            confirmed: !!r.u_confirmed,
            approved: !!r.u_approved,
            disabled: !!r.u_disabled,
            createdByApplicationId: (r.u_app_id as string | null) ?? null,
            invitedByAccountId: (r.u_invited_by as string | null) ?? null,
            role:
              r.fr_id == null
                ? null
                : {
                    id: r.fr_id as string,
                    name: r.fr_name as string,
                    color: r.fr_color as string,
                    permissions: r.fr_permissions as string,
                    highlighted: !!r.fr_highlighted,
                    position: Number(r.fr_position),
                  },
            ips: ips.map((x) => ({ ip: x.ip, usedAt: new Date(x.used_at) })),
          },
  };
}

/**
 * What Admin::Account says of each account in `ids` (unknown ids left out) and the page that
 * renders their public Account: one statement (plus reads/accounts.ts's mention and emoji
 * lookups, only when a profile has any).
 */
export async function loadAdminAccounts(services: Services, ids: readonly string[]): Promise<{ facts: Map<string, AdminAccountFacts>; page: AccountPage }> {
  const facts = new Map<string, AdminAccountFacts>();
  const wanted = [...new Set(ids)].filter(isId);
  if (wanted.length === 0) return { facts, page: await accountPageFromRows(services, []) };
  const rows = await services.db.sql.query<Row>(ADMIN_PAGE_SQL, [wanted, false]);
  for (const r of rows) if (r.in_page) facts.set(r.id as string, factsFromRow(r));
  return { facts, page: await accountPageFromRows(services, rows) };
}

/** The admin facts alone (the CLI's listing). */
export async function adminAccountFacts(services: Services, ids: readonly string[]): Promise<Map<string, AdminAccountFacts>> {
  return (await loadAdminAccounts(services, ids)).facts;
}

/** Mastodon's AccountFilter, as the v2 route takes it (v1's booleans are translated to it). */
export interface AdminAccountFilter {
  origin?: 'local' | 'remote';
  status?: 'active' | 'pending' | 'disabled' | 'silenced' | 'suspended' | 'sensitized';
  /** 'staff': users whose role may manage reports (or administrators). */
  permissions?: 'staff';
  roleIds?: string[];
  invitedBy?: string;
  username?: string;
  displayName?: string;
  byDomain?: string;
  email?: string;
  /** An address or a CIDR range: users who signed up or in from it. */
  ip?: string;
}

const likePrefix = (s: string): string => `${s.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * The page of accounts matching `f` as SQL (Mastodon orders the admin list by id, newest first):
 * the user join only when a filter needs it.
 */
function pageQuery(f: AdminAccountFilter, p: PageParams): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, ...values: unknown[]): void => {
    let i = 0;
    where.push(clause.replace(/\?/g, () => `$${params.push(values[i++])}`));
  };
  let needsUser = false;
  if (f.origin === 'local') add('a.domain is null');
  if (f.origin === 'remote') add('a.domain is not null');
  switch (f.status) {
    case 'active':
      add('a.suspended_at is null');
      break;
    case 'silenced':
      add('a.silenced_at is not null');
      break;
    case 'suspended':
      add('a.suspended_at is not null');
      break;
    case 'sensitized':
      add('a.sensitized_at is not null');
      break;
    case 'pending':
      needsUser = true;
      add('not u.approved');
      break;
    case 'disabled':
      needsUser = true;
      add('u.disabled');
      break;
    default:
      break;
  }
  if (f.permissions === 'staff') {
    needsUser = true;
    const bits = (PERMISSIONS.administrator | PERMISSIONS.manageReports).toString();
    add(`u.role_id in (select id from user_roles where permissions & ?::bigint <> 0)`, bits);
  }
  if (f.roleIds && f.roleIds.length > 0) {
    needsUser = true;
    add('u.role_id = any(?::bigint[])', f.roleIds.filter(isId));
  }
  if (f.invitedBy !== undefined) {
    needsUser = true;
    add('u.invited_by_account_id = ?', isId(f.invitedBy) ? f.invitedBy : null);
  }
  if (f.username) add('a.username ilike ?', likePrefix(f.username));
  if (f.displayName) add('a.display_name ilike ?', likePrefix(f.displayName));
  if (f.byDomain) add('a.domain = ?', f.byDomain.trim().toLowerCase());
  if (f.email) {
    needsUser = true;
    add('u.email ilike ?', likePrefix(f.email));
  }
  if (f.ip) {
    needsUser = true;
    add('exists (select 1 from user_ips x where x.user_id = u.id and x.ip <<= ?::inet)', f.ip);
  }
  const page = pageSql('a.id', p, params.length + 1);
  params.push(...page.params);
  params.push(p.limit);
  return {
    sql: `select a.id from accounts a ${needsUser ? 'join users u on u.account_id = a.id' : ''}
      where true ${where.length ? `and ${where.join(' and ')}` : ''}${page.where}
      order by ${page.order} limit $${params.length}`,
    params,
  };
}

/** The ids of one page of accounts matching `f`, newest first: one statement. */
export async function adminAccountPage(services: Services, f: AdminAccountFilter, p: PageParams): Promise<string[]> {
  const q = pageQuery(f, p);
  const rows = await services.db.sql.query<{ id: string }>(`select id::text from (${q.sql}) page`, q.params);
  return newestFirstIds(rows.map((r) => r.id));
}

/** Ids newest first (a min_id page is read oldest first). */
function newestFirstIds(ids: string[]): string[] {
  return ids.sort((x, y) => (BigInt(y) > BigInt(x) ? 1 : BigInt(y) < BigInt(x) ? -1 : 0));
}

/** What the admin list's page reads: the ids newest first, their facts and their Account page. */
export interface AdminAccountList {
  ids: string[];
  facts: Map<string, AdminAccountFacts>;
  page: AccountPage;
}

/**
 * The admin list's page whole in ONE statement: the page of ids (as adminAccountPage) and, for
 * them, what loadAdminAccounts reads. The ids newest first, the facts and the Account page.
 */
export async function loadAdminAccountList(services: Services, f: AdminAccountFilter, p: PageParams): Promise<AdminAccountList> {
  const q = pageQuery(f, p);
  const text = `with page as (${q.sql}), page_ids as (select coalesce(array_agg(id), '{}') as ids from page)
     ${adminPageSql('(select ids from page_ids)::bigint[]', 'false')}`;
  const rows = await services.db.sql.query<Row>(namedIfFew(text), q.params);
  return adminAccountListFromRows(services, rows);
}

/** How many list shapes (texts) one process sends as named statements. */
export const NAMED_LIST_SHAPES = 16;
const namedShapes = new Set<string>();

/**
 * The list's text is one of many shapes (each filter given adds a clause; the values are
 * parameters). Parsing and planning it cost as much as running it, so it is a named prepared
 * statement (db/prepared.ts) for the first NAMED_LIST_SHAPES shapes this process sends (a
 * moderator's usual few) and unnamed beyond: no mix of filters can use up the process's names.
 */
function namedIfFew(text: string): string {
  if (!namedShapes.has(text)) {
    if (namedShapes.size >= NAMED_LIST_SHAPES) return text;
    namedShapes.add(text);
  }
  return prepared(text);
}

/** The page from loadAdminAccountList's rows (apart so the bench can time it without the statement). */
export async function adminAccountListFromRows(services: Services, rows: readonly Row[]): Promise<AdminAccountList> {
  const facts = new Map<string, AdminAccountFacts>();
  for (const r of rows) if (r.in_page) facts.set(r.id as string, factsFromRow(r));
  const ids = newestFirstIds([...facts.keys()]);
  return { ids, facts, page: await accountPageFromRows(services, rows) };
}
