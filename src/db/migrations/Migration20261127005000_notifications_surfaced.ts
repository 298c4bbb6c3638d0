import { Migration } from '@mikro-orm/migrations';

/**
 * `notifications.surfaced_at`: when the notification was handed to the sinks (streaming, Web
 * Push). Null until then, so an outbox job that inserted its notifications and failed (or whose
 * process died) before its sinks ran hands them over when it is retried, instead of finding them
 * already there and surfacing nothing. Rows written before this column are taken as surfaced.
 */
export class Migration20261127005000_notifications_surfaced extends Migration {
  override name = 'Migration20261127005000_notifications_surfaced';

  override up(): void {
    this.addSql(`alter table notifications add column surfaced_at timestamptz`);
    this.addSql(`update notifications set surfaced_at = created_at`);
  }

  override down(): void {
    this.addSql(`alter table notifications drop column surfaced_at`);
  }
}
