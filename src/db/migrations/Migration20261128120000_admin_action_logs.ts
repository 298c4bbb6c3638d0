import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log: one row per admin action (who, what, on which target, when), written in the
 * transaction of the action itself (services/audit-log.ts). `account_id` is the moderator's
 * account; null when the operator acted through the CLI.
 */
export class Migration20261128120000_admin_action_logs extends Migration {
  override name = 'Migration20261128120000_admin_action_logs';

  override up(): void {
    this.addSql(`create table admin_action_logs (
      id bigint primary key,
      account_id bigint references accounts (id) on delete set null,
      action text not null,
      target_type text not null,
      target_id text,
      human_identifier text,
      detail jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index admin_action_logs_account on admin_action_logs (account_id, id desc)`);
    this.addSql(`create index admin_action_logs_target on admin_action_logs (target_type, target_id, id desc)`);
  }

  override down(): void {
    this.addSql(`drop table if exists admin_action_logs`);
  }
}
