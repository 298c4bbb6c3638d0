import { Migration } from '@mikro-orm/migrations';

/**
 * The backfill of conversations for statuses written before threads existed: every thread root (no
 * parent, or a parent that is not here) starts a conversation with its own id; replies inherit down
 * the tree; reblogs get none. Exported for its test (test/store/conversations-backfill.test.ts).
 */
export const CONVERSATIONS_BACKFILL_SQL: readonly string[] = [
  `insert into conversations (id, created_at)
     select s.id, s.created_at from statuses s
      where s.reblog_of_id is null and s.conversation_id is null
        and (s.in_reply_to_id is null or not exists (select 1 from statuses p where p.id = s.in_reply_to_id))`,
  `with recursive tree(id, conversation_id) as (
       select c.id, c.id from conversations c join statuses r on r.id = c.id and r.conversation_id is null
       union all
       select s.id, tree.conversation_id from statuses s join tree on s.in_reply_to_id = tree.id where s.reblog_of_id is null
     )
     update statuses s set conversation_id = tree.conversation_id from tree where s.id = tree.id and s.conversation_id is null`,
];

/**
 * What an edited status, a link preview and a muted thread need (Mastodon's tables of the same
 * names):
 *
 * - `status_edits`: the stored history of a status. The first edit also stores the original (as
 *   Mastodon's UpdateStatusService#create_previous_edit!), then one row per edit. Each row keeps
 *   the source text, its rendered HTML at that time, the content warning and sensitivity, and —
 *   filled once media and polls exist — the ordered media ids with their descriptions and the poll
 *   options (null: not recorded).
 * - `conversations`: a thread. A new status starts one, a reply joins its parent's. `uri` is for
 *   remote threads (ActivityPub `context`), unique when set. Existing statuses are backfilled: the
 *   root of each thread gives its id to the conversation (ids stay unique: a root's id is never
 *   issued again), its replies join it. Reblogs have none (muting one mutes its original's thread).
 * - `conversation_mutes`: who muted which thread (POST /api/v1/statuses/:id/mute); notifications
 *   will consult it.
 * - `preview_cards`: one card per URL (a cache shared by every status that links it), and
 *   `preview_cards_statuses`: the card of a status (at most one) with the URL as the status wrote it.
 */
export class Migration20261123193000_status_edits_cards_conversations extends Migration {
  override name = 'Migration20261123193000_status_edits_cards_conversations';

  override up(): void {
    this.addSql(`create table status_edits (
      id bigint primary key,
      status_id bigint not null references statuses (id) on delete cascade,
      account_id bigint references accounts (id) on delete set null,
      text text not null default '',
      content text not null default '',
      spoiler_text text not null default '',
      sensitive boolean not null default false,
      ordered_media_attachment_ids bigint[],
      media_descriptions text[],
      poll_options text[],
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index status_edits_status_idx on status_edits (status_id, id)`);

    this.addSql(`create table conversations (
      id bigint primary key,
      uri text,
      created_at timestamptz not null
    )`);
    this.addSql(`create unique index conversations_uri_key on conversations (uri) where uri is not null`);
    this.addSql(`alter table statuses add column conversation_id bigint references conversations (id) on delete set null`);
    this.addSql(`create index statuses_conversation_idx on statuses (conversation_id) where conversation_id is not null`);
    for (const statement of CONVERSATIONS_BACKFILL_SQL) this.addSql(statement);

    this.addSql(`create table conversation_mutes (
      account_id bigint not null references accounts (id) on delete cascade,
      conversation_id bigint not null references conversations (id) on delete cascade,
      created_at timestamptz not null,
      primary key (account_id, conversation_id)
    )`);

    this.addSql(`create table preview_cards (
      id bigint primary key,
      url text not null,
      title text not null default '',
      description text not null default '',
      type text not null default 'link' check (type in ('link', 'photo', 'video', 'rich')),
      author_name text not null default '',
      author_url text not null default '',
      provider_name text not null default '',
      provider_url text not null default '',
      html text not null default '',
      width integer not null default 0,
      height integer not null default 0,
      image_url text,
      image_description text not null default '',
      embed_url text not null default '',
      blurhash text,
      language text,
      published_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index preview_cards_url_key on preview_cards (url)`);
    this.addSql(`create table preview_cards_statuses (
      status_id bigint primary key references statuses (id) on delete cascade,
      preview_card_id bigint not null references preview_cards (id) on delete cascade,
      url text
    )`);
    this.addSql(`create index preview_cards_statuses_card_idx on preview_cards_statuses (preview_card_id)`);
    this.addSql(`create index preview_cards_statuses_url_idx on preview_cards_statuses (url)`);
  }

  override down(): void {
    this.addSql('drop table if exists preview_cards_statuses, preview_cards, conversation_mutes, status_edits cascade');
    this.addSql('alter table statuses drop column if exists conversation_id');
    this.addSql('drop table if exists conversations cascade');
  }
}
