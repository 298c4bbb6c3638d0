/**
 * The audit log: every admin action (through the admin API or the `roost` CLI) leaves one row in
 * `admin_action_logs`, written with `logAdminAction` inside the transaction of the action itself, so
 * an action that rolls back leaves no entry and an entry never lacks its action.
 *
 * `actorAccountId` is the moderator's account (the token's); null is the operator at the CLI.
 * `action` is a verb of Mastodon's admin vocabulary (`suspend`, `silence`, `approve`, `resolve`,
 * `create`, `update`, `destroy` …), `targetType` the kind of thing acted on (`Account`, `Report`,
 * `DomainBlock`, `EmailDomainBlock`, `IpBlock`, `UserRole`, `Webhook` …, Mastodon's class names),
 * `humanIdentifier` what a reader recognises it by (`alice@example.com`, a domain, a CIDR).
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';

export interface AdminAction {
  actorAccountId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  humanIdentifier?: string | null;
  detail?: Record<string, unknown>;
}

/** Writes one audit row in `sql`'s transaction (pass the action's own transaction). */
export async function logAdminAction(services: Services, sql: Sql, entry: AdminAction): Promise<void> {
  await sql.query(
    `insert into admin_action_logs (id, account_id, action, target_type, target_id, human_identifier, detail, created_at)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
    [
      services.ids.next(),
      entry.actorAccountId,
      entry.action,
      entry.targetType,
      entry.targetId,
      entry.humanIdentifier ?? null,
      JSON.stringify(entry.detail ?? {}),
      services.clock.now(),
    ],
  );
}

export interface AdminActionRow {
  id: string;
  account_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  human_identifier: string | null;
  detail: Record<string, unknown>;
  created_at: Date;
}

/**
 * A page of the log, newest first (`maxId` exclusive; `sinceId` / `minId` newer than, `minId`
 * walking forward from it, the rows still newest first), optionally for one moderator or target.
 */
export async function adminActionPage(
  services: Services,
  opts: { limit: number; maxId?: string | null; sinceId?: string | null; minId?: string | null; accountId?: string; targetType?: string; targetId?: string },
): Promise<AdminActionRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown): void => {
    params.push(value);
    where.push(clause.replace('?', `$${params.length}`));
  };
  if (opts.maxId) add('id < ?', opts.maxId);
  if (opts.sinceId) add('id > ?', opts.sinceId);
  if (opts.minId) add('id > ?', opts.minId);
  if (opts.accountId) add('account_id = ?', opts.accountId);
  if (opts.targetType) add('target_type = ?', opts.targetType);
  if (opts.targetId) add('target_id = ?', opts.targetId);
  params.push(opts.limit);
  const rows = await services.db.sql.query<AdminActionRow>(
    `select id::text, account_id::text, action, target_type, target_id, human_identifier, detail, created_at
       from admin_action_logs ${where.length ? `where ${where.join(' and ')}` : ''}
      order by id ${opts.minId ? 'asc' : 'desc'} limit $${params.length}`,
    params,
  );
  return (opts.minId ? rows.reverse() : rows).map((r) => ({ ...r, created_at: new Date(r.created_at) }));
}
