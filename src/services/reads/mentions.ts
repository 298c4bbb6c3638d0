/**
 * The known accounts that local profile texts (bios and field values, typed as plain text)
 * mention, for the formatter to link them: one query for a whole page, none when no text mentions
 * anybody.
 */
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import { handleKey, mentionedHandles, type MentionTarget } from '../../lib/text-format.ts';

/**
 * The known accounts `texts` mention, by handleKey. Suspended accounts are left out (their mention
 * stays text, as on Mastodon).
 */
export async function mentionTargets(services: Services, texts: readonly string[]): Promise<Map<string, MentionTarget>> {
  const out = new Map<string, MentionTarget>();
  const handles = new Map<string, { username: string; domain: string | null }>();
  for (const t of texts) for (const h of mentionedHandles(t, services.config.domain)) handles.set(handleKey(h.username, h.domain), h);
  if (handles.size === 0) return out;
  const list = [...handles.values()];
  const rows = await services.db.sql.query<{ username: string; domain: string | null; url: string | null; uri: string }>(
    `select a.username, a.domain, a.url, a.uri from accounts a
       join unnest($1::text[], $2::text[]) as h(username, domain)
         on lower(a.username) = lower(h.username) and coalesce(lower(a.domain), '') = lower(h.domain)
      where a.suspended_at is null`,
    [list.map((h) => h.username), list.map((h) => h.domain ?? '')],
  );
  for (const r of rows) out.set(handleKey(r.username, r.domain), { username: r.username, domain: r.domain, url: r.url ?? r.uri });
  return out;
}

/** The plain texts of local accounts that the serializer renders (bios and field values). */
export function localProfileTexts(accounts: Iterable<Account>): string[] {
  return [...accounts].filter((a) => a.domain === null).flatMap((a) => [a.note, ...a.fields.map((f) => f.value)]);
}
