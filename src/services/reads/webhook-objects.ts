/**
 * What an admin webhook's payload needs to know before it renders (views/webhook-objects.ts):
 * whether the account or status is local and still there (Mastodon's webhooks speak of local
 * accounts and statuses only).
 */
import type { Services } from '../../context.ts';

/** Whether `accountId` is a local account with its user. */
export async function isLocalAccount(services: Services, accountId: string): Promise<boolean> {
  const rows = await services.db.sql.query(`select 1 from accounts a join users u on u.account_id = a.id where a.id = $1 and a.domain is null`, [accountId]);
  return rows.length > 0;
}

/** Whether `statusId` is a local status still there. */
export async function isLocalStatus(services: Services, statusId: string): Promise<boolean> {
  const rows = await services.db.sql.query(`select 1 from statuses where id = $1 and local and deleted_at is null`, [statusId]);
  return rows.length > 0;
}
