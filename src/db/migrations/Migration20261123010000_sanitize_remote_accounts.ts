import { Migration } from '@mikro-orm/migrations';
import { plainText, REMOTE_LIMITS, safeHttpUrl, sanitizeRemoteHtml } from '../../lib/sanitize.ts';

/**
 * Remote accounts stored before remote text was sanitised on ingest (src/lib/sanitize.ts) may hold
 * hostile HTML, javascript: links and huge names: run them through the same sanitiser once, so
 * what is served is safe without waiting for each actor's next refresh.
 */
export class Migration20261123010000_sanitize_remote_accounts extends Migration {
  override name = 'Migration20261123010000_sanitize_remote_accounts';

  override async up(): Promise<void> {
    const rows = (await this.execute(
      `select id, uri, display_name, note, fields, url, avatar_url, header_url from accounts where domain is not null`,
    )) as { id: string; uri: string; display_name: string; note: string; fields: unknown; url: string | null; avatar_url: string | null; header_url: string | null }[];
    for (const r of rows) {
      const raw = typeof r.fields === 'string' ? JSON.parse(r.fields) : r.fields;
      const fields = (Array.isArray(raw) ? raw : [])
        .slice(0, REMOTE_LIMITS.fields)
        .map((f: { name?: unknown; value?: unknown; verified_at?: unknown }) => ({
          name: plainText(f?.name, REMOTE_LIMITS.fieldName),
          value: sanitizeRemoteHtml(f?.value, REMOTE_LIMITS.fieldValue),
          verified_at: typeof f?.verified_at === 'string' ? f.verified_at : null,
        }))
        .filter((f) => f.name);
      await this.execute(
        `update accounts set display_name = ?, note = ?, fields = ?::jsonb, url = ?, avatar_url = ?, header_url = ? where id = ?`,
        [
          plainText(r.display_name, REMOTE_LIMITS.displayName),
          sanitizeRemoteHtml(r.note, REMOTE_LIMITS.note),
          JSON.stringify(fields),
          safeHttpUrl(r.url) ?? r.uri,
          safeHttpUrl(r.avatar_url),
          safeHttpUrl(r.header_url),
          r.id,
        ],
      );
    }
  }
}
