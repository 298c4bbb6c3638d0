import type { InboxContext } from '@fedify/fedify';
import type { Flag } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { receiveRemoteReport } from '../../services/reports.ts';
import { resolveActivityActor } from './resolve.ts';

/**
 * A report from another server (Mastodon's ActivityPub::Activity::Flag): filed by the sending actor
 * (Mastodon, and Roost, send from the instance actor), about the local accounts among its objects,
 * citing their statuses among them, `content` the comment. Dropped when the sender's domain is
 * blocked with reject_reports (or suspended). The Flag's id is kept when it is on the sender's host,
 * so a repeat makes no second report.
 */
export async function onFlag(services: Services, _ctx: InboxContext<void>, flag: Flag): Promise<void> {
  const by = await resolveActivityActor(services, flag);
  if (!by?.domain) return;
  if ((await services.domainPolicy.snapshot()).rejectReports(by.domain)) {
    services.log.info({ activity: flag.id?.href, domain: by.domain }, 'Flag dropped: reports from this domain are rejected');
    return;
  }
  const uri = flag.id && flag.id.host === new URL(by.uri).host ? flag.id.href : null;
  const made = await receiveRemoteReport(services, by.id, {
    uri,
    objectUris: flag.objectIds.map((u) => u.href),
    comment: flag.content?.toString() ?? '',
  });
  if (made.length) services.log.info({ activity: flag.id?.href, reports: made }, 'Flag received');
}
