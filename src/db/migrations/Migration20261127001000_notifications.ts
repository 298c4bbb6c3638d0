import { Migration } from '@mikro-orm/migrations';

/**
 * Notifications and reports (issue 12 part 3).
 *
 * `notifications`: one row per thing that happened to a local account (Mastodon's Notification):
 * its recipient (`account_id`), who caused it (`from_account_id`), the `type` (mention, status,
 * reblog, follow, follow_request, favourite, poll, update, admin.sign_up, admin.report), and the
 * object it is about (`status_id`: for reblog and favourite the status that was boosted or
 * favourited, for poll the poll's status; `report_id`; `poll_id`). Written by
 * effects/notifications.ts after the event committed; `source_key` names what caused it (the
 * favourite, the reblog, the follow, the status, the outbox event of an edit …) and is unique per
 * recipient, so an event job that runs twice creates nothing twice. `group_key` is Mastodon's:
 * `<type>-<status id>-<hour bucket>` for favourite and reblog, `<type>-<hour bucket>` for follow and
 * admin.sign_up (a group spans at most 12 hours from its first bucket: `group_prefix` finds the
 * recipient's latest bucket for the prefix), `ungrouped-<id>` for every other type. Snowflake ids.
 *
 * `reports`: POST /api/v1/reports (Mastodon's Report): the reporter, the reported account, the
 * statuses and rules cited, the category, the comment, whether it was forwarded.
 */
export class Migration20261127001000_notifications extends Migration {
  override name = 'Migration20261127001000_notifications';

  override up(): void {
    this.addSql(`create table reports (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      status_ids bigint[] not null default '{}',
      rule_ids bigint[],
      comment text not null default '',
      category text not null,
      forwarded boolean not null default false,
      action_taken_at timestamptz,
      uri text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index reports_target_idx on reports (target_account_id)`);
    this.addSql(`create index reports_account_idx on reports (account_id)`);
    this.addSql(`create table notifications (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      from_account_id bigint not null references accounts (id) on delete cascade,
      type text not null,
      status_id bigint references statuses (id) on delete cascade,
      report_id bigint references reports (id) on delete cascade,
      poll_id bigint,
      source_key text not null,
      group_key text not null,
      group_prefix text,
      created_at timestamptz not null
    )`);
    this.addSql(`create unique index notifications_source_key on notifications (account_id, source_key)`);
    this.addSql(`create index notifications_account_idx on notifications (account_id, id desc)`);
    this.addSql(`create index notifications_group_idx on notifications (account_id, group_key, id desc)`);
    this.addSql(`create index notifications_prefix_idx on notifications (account_id, group_prefix, id desc) where group_prefix is not null`);
    this.addSql(`create index notifications_status_idx on notifications (status_id) where status_id is not null`);
    this.addSql(`create index notifications_from_idx on notifications (from_account_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists notifications, reports cascade');
  }
}
