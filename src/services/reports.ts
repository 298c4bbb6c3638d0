/**
 * Filing a report (POST /api/v1/reports, Mastodon's ReportService): the reported account (404 when
 * unknown), the statuses cited (each the reported account's and one the reporter may see, as
 * Mastodon's AccountStatusesFilter, else 404), the category (spam, legal, violation, other;
 * `other` by default, `violation` whenever rules are cited), the rules (ids of the configured
 * instance rules, 1-based as GET /api/v1/instance/rules shows them), a comment of at most 1000
 * characters. The row and the `report.created` fact are written in one transaction;
 * effects/notifications.ts turns the fact into admin.report notifications for the moderators.
 *
 * With `forward` and a remote account, the report is `forwarded`: effects/dispatch.ts sends a Flag
 * from the instance actor to the account's server (the reporter stays anonymous).
 *
 * A Flag from another server (federation/inbox/flag.ts) becomes a report here too
 * (`receiveRemoteReport`, Mastodon's ActivityPub::Activity::Flag): filed by the account that sent
 * it (the remote server's instance actor, as Mastodon sends them), about each local account it
 * names, citing the statuses of that account it names.
 */
import type { Services } from '../context.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { REPORT_CATEGORIES, type ReportRow } from '../serializers/report.ts';
import { recordEvent } from './actor-store.ts';
import { isId } from './reads/page.ts';
import { visibleSql } from './reads/statuses.ts';
import { reportFromRow } from './reads/notifications.ts';

export const MAX_REPORT_COMMENT = 1000;
/** At most this many statuses cited in one report. */
export const MAX_REPORT_STATUSES = 100;

export interface ReportInput {
  accountId: string | undefined;
  statusIds: string[];
  ruleIds: string[];
  comment: string;
  category: string | undefined;
  forward: boolean;
}

export async function createReport(services: Services, reporterId: string, input: ReportInput): Promise<ReportRow> {
  if (!input.accountId || !isId(input.accountId)) throw new RoostError(404, 'Record not found');
  const sql = services.db.sql;
  const [target] = await sql.query<{ id: string; domain: string | null }>(`select id::text, domain from accounts where id = $1`, [input.accountId]);
  if (!target) throw new RoostError(404, 'Record not found');
  const statusIds = [...new Set(input.statusIds)];
  if (statusIds.length) {
    if (statusIds.length > MAX_REPORT_STATUSES || !statusIds.every(isId)) throw new RoostError(404, 'Record not found');
    // Only statuses the reporter may see (else citing an id would tell whether a private status
    // exists), deleted ones included as Mastodon's `with_discarded`: the status as if not deleted.
    const found = await sql.query<{ id: string }>(
      `select s.id::text from (select id, account_id, visibility, null::timestamptz as deleted_at from statuses
                                where id = any($1::bigint[]) and account_id = $2) s
        where ${visibleSql('s', '$3::bigint')}`,
      [statusIds, target.id, reporterId],
    );
    if (found.length !== statusIds.length) throw new RoostError(404, 'Record not found');
  }

  const v = new Validation();
  const ruleIds = [...new Set(input.ruleIds)];
  const category = ruleIds.length ? 'violation' : (input.category ?? 'other');
  if (!(REPORT_CATEGORIES as readonly string[]).includes(category)) v.add('category', 'ERR_INCLUSION', 'is not included in the list');
  const rules = services.config.instance.rules.length;
  if (category === 'violation' && (ruleIds.length === 0 || !ruleIds.every((id) => /^\d{1,9}$/.test(id) && Number(id) >= 1 && Number(id) <= rules))) {
    v.add('rule_ids', 'ERR_INVALID', 'does not reference valid rules');
  }
  if ([...input.comment].length > MAX_REPORT_COMMENT) v.add('comment', 'ERR_TOO_LONG', `is too long (maximum is ${MAX_REPORT_COMMENT} characters)`);
  if (input.comment.includes('\u0000')) v.add('comment', 'ERR_INVALID', 'is invalid');
  v.throwIfInvalid();

  // Forwarded (effects/dispatch.ts sends a Flag) when asked and the account is another server's.
  const forwarded = input.forward && target.domain !== null;
  const now = services.clock.now();
  const id = services.ids.next();
  return sql.transaction(async (tx) => {
    const [row] = await tx.query<Record<string, unknown>>(
      `insert into reports (id, account_id, target_account_id, status_ids, rule_ids, comment, category, forwarded, created_at, updated_at)
       values ($1, $2, $3, $4::bigint[], $5::bigint[], $6, $7, $9, $8, $8)
       returning id::text, account_id::text, target_account_id::text, status_ids::text[], rule_ids::text[], comment, category, forwarded, action_taken_at, created_at`,
      [id, reporterId, target.id, statusIds, ruleIds.length ? ruleIds : null, input.comment, category, now, forwarded],
    );
    await recordEvent(services, tx, {
      actorKind: 'report',
      actorId: id,
      origin: 'client',
      event: { type: 'report.created', reportId: id, accountId: reporterId, targetAccountId: target.id },
    });
    return reportFromRow(row!);
  });
}

/** A remote comment is kept up to this many characters (Mastodon's Flag handler). */
export const MAX_REMOTE_REPORT_COMMENT = 5000;

export interface RemoteReportInput {
  /** The Flag's id (null when it is not on the sender's server): a Flag delivered again makes no second report. */
  uri: string | null;
  /** The Flag's objects: actor and status URIs. */
  objectUris: string[];
  comment: string;
}

/**
 * A report from another server: one per local, unsuspended account among `objectUris`, citing the
 * statuses among them that are that account's. Category `other` (a Flag carries none). The rows
 * and their `report.created` facts (admin.report notifications for the moderators) commit
 * together. Returns the ids of the reports made (none for a repeat).
 */
export async function receiveRemoteReport(services: Services, reporterId: string, input: RemoteReportInput): Promise<string[]> {
  const uris = [...new Set(input.objectUris)].slice(0, MAX_REPORT_STATUSES + 10);
  if (uris.length === 0) return [];
  const comment = [...input.comment.replaceAll('\u0000', '')].slice(0, MAX_REMOTE_REPORT_COMMENT).join('');
  const sql = services.db.sql;
  const targets = await sql.query<{ id: string; status_ids: string[] }>(
    `select a.id::text,
            array(select s.id::text from statuses s where s.uri = any($1::text[]) and s.account_id = a.id order by s.id limit ${MAX_REPORT_STATUSES}) as status_ids
       from accounts a
      where a.uri = any($1::text[]) and a.domain is null and a.suspended_at is null`,
    [uris],
  );
  if (targets.length === 0) return [];
  const now = services.clock.now();
  return sql.transaction(async (tx) => {
    const made: string[] = [];
    for (const t of targets) {
      const id = services.ids.next();
      const [row] = await tx.query<{ id: string }>(
        `insert into reports (id, account_id, target_account_id, status_ids, comment, category, forwarded, uri, created_at, updated_at)
         values ($1, $2, $3, $4::bigint[], $5, 'other', false, $6, $7, $7)
         on conflict (uri, target_account_id) where uri is not null do nothing
         returning id::text`,
        [id, reporterId, t.id, t.status_ids, comment, input.uri, now],
      );
      if (!row) continue;
      await recordEvent(services, tx, {
        actorKind: 'report',
        actorId: id,
        origin: 'federation',
        event: { type: 'report.created', reportId: id, accountId: reporterId, targetAccountId: t.id },
      });
      made.push(id);
    }
    return made;
  });
}
