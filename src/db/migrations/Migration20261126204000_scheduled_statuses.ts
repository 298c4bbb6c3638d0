import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled statuses (Mastodon's ScheduledStatus), each the row of a scheduled status actor
 * (actors/scheduled-status): the author, the time, the parameters of POST /api/v1/statuses as
 * Mastodon keeps them (`params`), and the state columns the actor store projects from the
 * snapshot (state, scheduled_at, status_id, failure). Unlike Mastodon, which deletes the row when
 * it publishes or cancels, the row stays with its end state: the actor's refusal of a second
 * publish is what makes publication happen once. Only `scheduled` rows are listed and counted
 * against the limits (partial indexes below).
 *
 * media_attachments.scheduled_status_id: attachments reserved by a scheduled status (Mastodon's
 * column of the same name). A reserved attachment cannot be attached to another status; it is
 * attached to the status at publication, and let go when the scheduled status is cancelled or
 * fails.
 */
export class Migration20261126204000_scheduled_statuses extends Migration {
  override name = 'Migration20261126204000_scheduled_statuses';

  override up(): void {
    this.addSql(`create table scheduled_statuses (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      application_id bigint,
      scheduled_at timestamptz not null,
      params jsonb not null,
      idempotency_key text,
      state text not null default 'scheduled' check (state in ('scheduled', 'published', 'cancelled', 'failed')),
      status_id bigint references statuses (id) on delete set null,
      failure text,
      machine jsonb,
      machine_version integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index scheduled_statuses_account_idx on scheduled_statuses (account_id, id desc) where state = 'scheduled'`);
    this.addSql(`create index scheduled_statuses_account_time_idx on scheduled_statuses (account_id, scheduled_at) where state = 'scheduled'`);
    this.addSql(`create index scheduled_statuses_idempotency_idx on scheduled_statuses (account_id, idempotency_key, created_at) where idempotency_key is not null`);
    this.addSql(`alter table media_attachments add column scheduled_status_id bigint references scheduled_statuses (id) on delete set null`);
    this.addSql(`create index media_attachments_scheduled_status_idx on media_attachments (scheduled_status_id, position) where scheduled_status_id is not null`);
  }

  override down(): void {
    this.addSql('drop index if exists media_attachments_scheduled_status_idx');
    this.addSql('alter table media_attachments drop column if exists scheduled_status_id');
    this.addSql('drop table if exists scheduled_statuses');
  }
}
