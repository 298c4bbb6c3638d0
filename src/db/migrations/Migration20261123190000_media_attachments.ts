import { Migration } from '@mikro-orm/migrations';

/**
 * Media attachments (Mastodon's MediaAttachment): uploaded by a local account, processed (the
 * original re-encoded and a `small` preview made), then attached to at most one status, at a
 * position. A remote attachment has a `remote_url` and no stored files (fetched lazily, later).
 * The focal point lives in its own columns, so a PUT during processing is not lost when the job
 * writes `meta` (the sizes).
 */
export class Migration20261123190000_media_attachments extends Migration {
  override name = 'Migration20261123190000_media_attachments';

  override up(): void {
    this.addSql(`create table media_attachments (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint references statuses (id) on delete set null,
      position smallint,
      type text not null check (type in ('image', 'gifv', 'video', 'audio', 'unknown')),
      processing text not null default 'complete' check (processing in ('queued', 'in_progress', 'complete', 'failed')),
      file_key text,
      small_key text,
      content_type text,
      file_size bigint,
      description text,
      focus_x real,
      focus_y real,
      meta jsonb,
      blurhash text,
      remote_url text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index media_attachments_account_idx on media_attachments (account_id, id desc)`);
    this.addSql(`create index media_attachments_status_idx on media_attachments (status_id, position) where status_id is not null`);
  }

  override down(): void {
    this.addSql('drop table if exists media_attachments cascade');
  }
}
