/**
 * When an operator-configured text last changed. The extended description and the privacy policy
 * come from the configuration (file or environment), which keeps no history; a config file's
 * mtime would move on any edit of any key, and environment variables have none. So Roost keeps
 * the SHA-256 of each text it has served with the time it first saw that version
 * (configured_texts): `updated_at` moves exactly when the text does and stays put across
 * restarts. A text that is empty has no time (null).
 */
import { createHash } from 'node:crypto';
import type { Services } from '../context.ts';

export async function configuredTextUpdatedAt(services: Services, name: string, text: string | null): Promise<Date | null> {
  if (!text || !text.trim()) return null;
  const sha256 = createHash('sha256').update(text).digest('hex');
  // Insert the first version, replace a changed one; an unchanged one keeps its time.
  await services.db.sql.query(
    `insert into configured_texts (name, sha256, updated_at) values ($1, $2, $3)
     on conflict (name) do update set sha256 = excluded.sha256, updated_at = excluded.updated_at
       where configured_texts.sha256 <> excluded.sha256`,
    [name, sha256, services.clock.now()],
  );
  const [row] = await services.db.sql.query<{ updated_at: Date | string }>(`select updated_at from configured_texts where name = $1`, [name]);
  return row ? new Date(row.updated_at) : null;
}
