import { Migration } from '@mikro-orm/migrations';

/**
 * Outgoing delivery (src/federation/delivery.ts).
 *
 * deliveries — one row per activity sent: how many inboxes it goes to (after shared-inbox
 *   de-duplication), how many took it (2xx), how many were given up (a permanent 4xx such as 410,
 *   or attempts exhausted) and how many wait for a retry or for their host's circuit to close.
 *   Written by the delivery job, one statement per round: never a row per inbox.
 *
 * delivery_hosts — the circuit breaker, one row per remote host with failures since its last
 *   success: `failures` consecutive failed rounds since `first_failure_at`. The circuit opens
 *   (`open_until` set) after enough of them over a long enough span; while open, deliveries to
 *   the host are parked until `open_until`, when one probe goes out (`probes` counts them: the
 *   wait doubles). A success deletes the row.
 */
export class Migration20261123196000_deliveries extends Migration {
  override name = 'Migration20261123196000_deliveries';

  override up(): void {
    this.addSql(`create table deliveries (
      activity_id text primary key,
      activity_type text not null,
      sender text not null,
      lane text not null,
      inboxes integer not null default 0,
      delivered integer not null default 0,
      failed integer not null default 0,
      pending integer not null default 0,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index deliveries_created_at on deliveries (created_at)`);
    this.addSql(`create table delivery_hosts (
      host text primary key,
      failures integer not null,
      first_failure_at timestamptz not null,
      last_failure_at timestamptz not null,
      open_until timestamptz,
      probes integer not null default 0
    )`);
  }

  override down(): void {
    this.addSql('drop table delivery_hosts');
    this.addSql('drop table deliveries');
  }
}
