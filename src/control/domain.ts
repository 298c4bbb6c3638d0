/**
 * A server's domain is fixed once it has started: its accounts' ids, keys and the follows other
 * servers hold are bound to it (Mastodon refuses a changed LOCAL_DOMAIN too). The first start
 * writes the domain into the database; a later start with another one stops with a message.
 */
import { ConfigError } from '../../config/index.ts';
import type { Sql } from '../db/sql.ts';

export class DomainChangedError extends ConfigError {
  override name = 'DomainChangedError';
}

/** Records `domain` on the first start; throws DomainChangedError when the database has another. */
export async function checkInstanceDomain(sql: Sql, domain: string, where: string): Promise<void> {
  await sql.query(`insert into instance_settings (name, value) values ('domain', $1) on conflict (name) do nothing`, [domain]);
  const [row] = await sql.query<{ value: string }>(`select value from instance_settings where name = 'domain'`);
  if (row && row.value !== domain) {
    throw new DomainChangedError(
      `The database (${where}) belongs to the domain ${row.value}, but this configuration says ${domain}. ` +
        `A server's domain cannot change: its accounts and what other servers know of them are bound to it. ` +
        `Set ROOST_DOMAIN=${row.value} (ROOST_PORT can still be anything), or use a new data directory or database for ${domain}.`,
    );
  }
}
