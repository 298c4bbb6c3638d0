import { Migration } from '@mikro-orm/migrations';

/**
 * Per-inbox progress of a delivery job (src/federation/delivery.ts), so that a fan-out retaken
 * after its process died (kill -9, a lost lease) sends only to the inboxes not yet settled.
 *
 * delivery_checkpoints — one row per inbox a bulk-lane delivery job has settled in its current
 *   round: `status` the HTTP status it answered (2xx delivered, 4xx given up), or 0 for an inbox
 *   given up after the last round. Written in batches while the job drains (every 100 outcomes or
 *   250 ms, in the same statement that moves the activity's counts in `deliveries`, so the two
 *   agree after a crash), read when a job is retaken, deleted at the end of the round. Keyed by the
 *   job row's id; rows of a job that is gone are swept with the settled `deliveries` rows.
 */
export class Migration20261127040000_delivery_checkpoints extends Migration {
  override name = 'Migration20261127040000_delivery_checkpoints';

  override up(): void {
    this.addSql(`create table delivery_checkpoints (
      job_id bigint not null,
      inbox text not null,
      status smallint not null,
      primary key (job_id, inbox)
    )`);
  }

  override down(): void {
    this.addSql('drop table delivery_checkpoints');
  }
}
