import { Migration } from '@mikro-orm/migrations';

/**
 * The streaming API's event log (src/streaming/store.ts): every event the outbox consumer
 * (src/effects/streaming.ts) renders is written here once, with the stream keys it goes to, and
 * announced with `NOTIFY roost_streaming, '<id>'` in the same statement (so only committed rows
 * are announced; NOTIFY payloads are capped at 8000 bytes, rendered statuses are not). Every
 * process serving streaming clients reads new rows by id, whichever process wrote them
 * (`roost start --role streaming` beside `--role web`/`worker` on one PostgreSQL). The same rows
 * are the resume buffer: a client reconnecting with its last event id gets the rows it missed.
 * The table is bounded: rows older than the resume window are deleted as new ones are written.
 *
 * author_id, mention_ids and author_domain let each streaming process drop an event for a
 * subscriber who blocks or mutes the author or a mentioned account, or blocks the author's domain.
 */
export class Migration20261127002000_streaming extends Migration {
  override name = 'Migration20261127002000_streaming';

  override up(): void {
    this.addSql(`create table streaming_events (
      id bigserial primary key,
      streams text[] not null,
      event text not null,
      payload text,
      author_id bigint,
      mention_ids bigint[] not null default '{}',
      author_domain text,
      created_at timestamptz not null
    )`);
    this.addSql(`create index streaming_events_created_idx on streaming_events (created_at)`);
  }

  override down(): void {
    this.addSql('drop table if exists streaming_events');
  }
}
