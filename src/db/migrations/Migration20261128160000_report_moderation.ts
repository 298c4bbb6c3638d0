import { Migration } from '@mikro-orm/migrations';

/**
 * Reports handled by moderators (issue 27 item 3): who took the report on (`assigned_account_id`)
 * and who resolved it (`action_taken_by_account_id`, beside the existing `action_taken_at`), as
 * Mastodon's reports table. A moderator's account going away leaves the report, unassigned.
 *
 * `uri` (already there) is the id of the Flag a report came in with: unique per reported account,
 * so a Flag delivered twice makes one report. The partial index serves the admin list's default
 * filter, the unresolved reports.
 */
export class Migration20261128160000_report_moderation extends Migration {
  override name = 'Migration20261128160000_report_moderation';

  override up(): void {
    this.addSql(`alter table reports
      add column assigned_account_id bigint references accounts (id) on delete set null,
      add column action_taken_by_account_id bigint references accounts (id) on delete set null`);
    this.addSql(`create unique index reports_uri_target_key on reports (uri, target_account_id) where uri is not null`);
    this.addSql(`create index reports_unresolved_idx on reports (id desc) where action_taken_at is null`);
  }

  override down(): void {
    this.addSql(`drop index if exists reports_unresolved_idx`);
    this.addSql(`drop index if exists reports_uri_target_key`);
    this.addSql(`alter table reports drop column if exists assigned_account_id, drop column if exists action_taken_by_account_id`);
  }
}
