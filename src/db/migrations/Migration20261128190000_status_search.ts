import { Migration } from '@mikro-orm/migrations';

/**
 * Full-text search over statuses (GET /api/v2/search) in PostgreSQL: a generated `search_vector`
 * column and a GIN index on it.
 *
 * The text searched is the content warning and the text: a local status's source text, a remote
 * one's HTML with its tags and entities removed (remote statuses keep no source). The `simple`
 * configuration (lower-cased words, no stemming, no stop words) is one for every language: a
 * status and a query are read the same way whatever language either is in (many statuses carry no
 * language or a wrong one), and a word in a language PostgreSQL has no dictionary for is still
 * found. Prefix search (`word:*`) makes up for some of the stemming it lacks.
 *
 * A generated column rather than an index expression: the ranking (ts_rank) reads the stored
 * vector of each match instead of parsing its text again, and an edit or a newly written status
 * gets its vector in the same statement, with no statement of its own.
 */
export class Migration20261128190000_status_search extends Migration {
  override name = 'Migration20261128190000_status_search';

  override up(): void {
    this.addSql(`alter table statuses add column search_vector tsvector generated always as (
      to_tsvector('simple'::regconfig, spoiler_text || ' ' || case when local then text
        else regexp_replace(regexp_replace(content, '<[^>]*>', ' ', 'g'), '&(#?[a-zA-Z0-9]+);', ' ', 'g') end)
    ) stored`);
    this.addSql(`create index statuses_search_idx on statuses using gin (search_vector)`);
  }

  override down(): void {
    this.addSql(`drop index if exists statuses_search_idx`);
    this.addSql(`alter table statuses drop column if exists search_vector`);
  }
}
