import { Migration } from '@mikro-orm/migrations';

/**
 * `streaming_events.source_key`: what wrote the row (`outbox:<event id>/update`,
 * `notification:<id>` …), unique while the row is kept. The streaming consumer of the outbox is
 * retried on its own (src/effects/registry.ts), and a job re-run after a crash runs it again: a
 * frame already written for that fact is not written, nor announced, a second time.
 */
export class Migration20261128010000_streaming_source_key extends Migration {
  override name = 'Migration20261128010000_streaming_source_key';

  override up(): void {
    this.addSql(`alter table streaming_events add column source_key text`);
    this.addSql(`create unique index streaming_events_source_key_idx on streaming_events (source_key) where source_key is not null`);
  }

  override down(): void {
    this.addSql(`drop index streaming_events_source_key_idx`);
    this.addSql(`alter table streaming_events drop column source_key`);
  }
}
