/**
 * Dismissing notifications (POST /api/v1/notifications/:id/dismiss, /clear,
 * /api/v2/notifications/:group_key/dismiss): the recipient's rows go. One statement each.
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { groupKeySql } from './reads/notifications.ts';

export async function dismissNotification(services: Services, recipientId: string, id: string): Promise<void> {
  const rows = await services.db.sql.query(`delete from notifications where id = $1 and account_id = $2 returning 1`, [id, recipientId]);
  if (rows.length === 0) throw new RoostError(404, 'Record not found');
}

export async function clearNotifications(services: Services, recipientId: string): Promise<void> {
  await services.db.sql.query(`delete from notifications where account_id = $1`, [recipientId]);
}

/** Every notification of the group goes (none there: nothing to do, as Mastodon). */
export async function dismissNotificationGroup(services: Services, recipientId: string, groupKey: string): Promise<void> {
  await services.db.sql.query(`delete from notifications n where n.account_id = $1 and ${groupKeySql('$2')}`, [recipientId, groupKey]);
}
