import { Migration } from '@mikro-orm/migrations';

/**
 * Polls, each the row of a poll actor (actors/poll): the options, the settings, and the state
 * columns the actor store projects from the snapshot (state, tallies, voters, closed_at). One
 * poll per status, gone with it.
 *
 * poll_votes: who voted for what, one row per voter (a local account id or a remote actor URI
 * in `voter`) with the option indexes chosen. The votes live here and not in the snapshot: a
 * poll with 10,000 voters keeps a snapshot of a few hundred bytes, so the 10,001st vote costs
 * what the first did; the unique (poll_id, voter) key makes a double vote lose a race cleanly;
 * `own_votes` for a page of statuses is one indexed lookup; the voters at close (the poll-ended
 * notification) are one read. Unlike Mastodon (one row per choice), one row per voter: the
 * double-vote check is the key itself.
 */
export class Migration20261123191000_polls extends Migration {
  override name = 'Migration20261123191000_polls';

  override up(): void {
    this.addSql(`create table polls (
      id bigint primary key,
      status_id bigint not null references statuses (id) on delete cascade,
      account_id bigint not null references accounts (id) on delete cascade,
      local boolean not null,
      uri text,
      options text[] not null,
      multiple boolean not null default false,
      hide_totals boolean not null default false,
      expires_at timestamptz,
      state text not null default 'open' check (state in ('open', 'closed', 'deleted')),
      cached_tallies integer[] not null,
      votes_count integer not null default 0,
      voters_count integer not null default 0,
      closed_at timestamptz,
      machine jsonb,
      machine_version integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (status_id)
    )`);
    this.addSql(`create table poll_votes (
      id bigint primary key,
      poll_id bigint not null references polls (id) on delete cascade,
      voter text not null,
      account_id bigint references accounts (id) on delete cascade,
      choices integer[] not null,
      uri text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (poll_id, voter)
    )`);
    this.addSql(`create index poll_votes_account_idx on poll_votes (account_id, poll_id) where account_id is not null`);
  }

  override down(): void {
    this.addSql('drop table if exists poll_votes');
    this.addSql('drop table if exists polls');
  }
}
