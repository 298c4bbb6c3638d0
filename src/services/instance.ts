/** The numbers behind NodeInfo and the instance API, counted from the database. */
import type { Services } from '../context.ts';
import { configuredTextUpdatedAt } from './configured-texts.ts';
import { minIdAt } from '../lib/snowflake.ts';

export interface InstanceStats {
  userCount: number;
  statusCount: number;
  domainCount: number;
  activeMonth: number;
  activeHalfyear: number;
}

const DAY = 24 * 3600_000;

function daysAgo(now: Date, days: number): string {
  return new Date(now.getTime() - days * DAY).toISOString().slice(0, 10);
}

export async function instanceStats(services: Services): Promise<InstanceStats> {
  const now = services.clock.now();
  const [row] = await services.db.sql.query<{
    users: number;
    statuses: number;
    domains: number;
    month: number;
    halfyear: number;
  }>(
    `select
       (select count(*)::int from users u join accounts a on a.id = u.account_id
         where a.suspended_at is null and u.approved) as users,
       (select count(*)::int from statuses where local and deleted_at is null) as statuses,
       (select count(distinct domain)::int from accounts where domain is not null) as domains,
       (select count(distinct user_id)::int from user_activity_days where day > $1::date) as month,
       (select count(distinct user_id)::int from user_activity_days where day > $2::date) as halfyear`,
    [daysAgo(now, 30), daysAgo(now, 180)],
  );
  return {
    userCount: row.users,
    statusCount: row.statuses,
    domainCount: row.domains,
    activeMonth: row.month,
    activeHalfyear: row.halfyear,
  };
}

export interface ActivityWeek {
  /** Monday 00:00 UTC, UNIX seconds. */
  weekStart: number;
  statuses: number;
  logins: number;
  registrations: number;
}

/** The last 12 weeks (current week first), as Mastodon reports them. */
export async function instanceActivity(services: Services): Promise<ActivityWeek[]> {
  const weeks: ActivityWeek[] = [];
  for (const weekStart of instanceActivityWeekStarts(services.clock.now())) {
    const start = new Date(weekStart * 1000);
    const end = new Date(start.getTime() + 7 * DAY);
    const [row] = await services.db.sql.query<{ statuses: number; logins: number; registrations: number }>(
      `select
         (select count(*)::int from statuses where local and id >= $1 and id < $2) as statuses,
         (select count(distinct user_id)::int from user_activity_days where day >= $3::date and day < $4::date) as logins,
         (select count(*)::int from users where created_at >= $5 and created_at < $6) as registrations`,
      [minIdAt(start), minIdAt(end), start.toISOString().slice(0, 10), end.toISOString().slice(0, 10), start, end],
    );
    weeks.push({ weekStart, ...row });
  }
  return weeks;
}

/**
 * Domains this server knows accounts on, without those the domain policy silences or suspends
 * (Mastodon leaves out the domains of its user-facing blocks).
 */
export async function instancePeers(services: Services): Promise<string[]> {
  const [rows, policy] = await Promise.all([
    services.db.sql.query<{ domain: string }>(`select distinct domain from accounts where domain is not null and suspended_at is null order by domain`),
    services.domainPolicy.snapshot(),
  ]);
  return rows.map((r) => r.domain).filter((d) => {
    const severity = policy.blockFor(d)?.severity;
    return severity !== 'silence' && severity !== 'suspend';
  });
}

// --- the instance view: configuration + database → what the serializers render -----------------

import { AccountSchema } from '../db/entities/index.ts';
import { DEFAULT_TIMELINES_ACCESS, instanceActivityWeekStarts } from '../lib/instance-policy.ts';
import type { InstanceView } from '../serializers/instance.ts';
import { defaultThumbnail } from '../lib/default-thumbnail.ts';
import type { Account } from '../db/entities/index.ts';
import type { AccountView } from '../serializers/account.ts';
import { accountView } from './account-views.ts';

/** Where the default server thumbnail is served (src/api/well-known.ts). */
export const THUMBNAIL_PATH = '/thumbnail.png';
export const THUMBNAIL_2X_PATH = '/thumbnail@2x.png';

/** The contact account with the view that renders it (the API layer serializes it, once per view). */
export interface ContactAccount {
  account: Account;
  view: AccountView;
}

async function contactAccount(services: Services): Promise<ContactAccount | null> {
  const em = services.db.em();
  const { contactUsername } = services.config.instance;
  let account = contactUsername
    ? await em.findOne(AccountSchema, { username: contactUsername, domain: null })
    : null;
  if (!account) {
    // Mastodon falls back to the first Owner when no contact is configured.
    const [owner] = await services.db.sql.query<{ account_id: string }>(
      `select u.account_id from users u where u.role_id = 1 order by u.id limit 1`,
    );
    if (owner) account = await em.findOne(AccountSchema, { id: owner.account_id });
  }
  return account ? { account, view: await accountView(services, [account]) } : null;
}

/**
 * The instance document is read by every client at start and by crawlers, and it changes rarely:
 * it is built at most once per INSTANCE_VIEW_TTL_MS per instance (its counts may lag that much, as
 * Mastodon's cached instance presenter's do). A pending build is shared by concurrent callers.
 */
export const INSTANCE_VIEW_TTL_MS = 10_000;
const viewCache = new WeakMap<Services, { at: number; view: Promise<InstanceView<ContactAccount>> }>();

export function instanceView(services: Services): Promise<InstanceView<ContactAccount>> {
  const now = services.clock.now().getTime();
  const hit = viewCache.get(services);
  if (hit && now - hit.at < INSTANCE_VIEW_TTL_MS && now >= hit.at) return hit.view;
  const view = buildInstanceView(services);
  viewCache.set(services, { at: now, view });
  view.catch(() => viewCache.delete(services));
  return view;
}

export async function buildInstanceView(services: Services): Promise<InstanceView<ContactAccount>> {
  const { config } = services;
  const base = config.publicUrl;
  const [stats, contact, descriptionAt, policyAt, thumb] = await Promise.all([
    instanceStats(services),
    contactAccount(services),
    configuredTextUpdatedAt(services, 'extended_description', config.instance.description),
    configuredTextUpdatedAt(services, 'privacy_policy', config.instance.privacyPolicy),
    defaultThumbnail(),
  ]);
  return {
    domain: config.domain,
    baseUrl: base,
    streamingUrl: base.replace(/^http/, 'ws'),
    softwareVersion: services.version,
    sourceUrl: config.instance.sourceUrl,
    title: config.instance.title,
    shortDescription: config.instance.shortDescription,
    extendedDescription: { markdown: config.instance.description, updatedAt: descriptionAt },
    privacyPolicy: { markdown: config.instance.privacyPolicy, updatedAt: policyAt },
    contact: { email: config.instance.contactEmail, account: contact },
    languages: config.instance.languages,
    rules: config.instance.rules.map((r, i) => ({ id: String(i + 1), text: r.text, hint: r.hint })),
    registrations: {
      mode: config.registrations.mode,
      closedMessageMarkdown: config.registrations.message,
      reasonRequired: config.registrations.mode === 'approval',
      minAge: null,
      url: null,
      invitesEnabled: false,
    },
    urls: {
      status: config.instance.statusPageUrl,
      about: `${base}/about`,
      privacyPolicy: `${base}/privacy-policy`,
      termsOfService: null,
    },
    vapidPublicKey: services.secrets.vapidPublicKey,
    translationEnabled: config.translation.url !== null,
    limitedFederation: config.federation.mode === 'allowlist',
    timelinesAccess: DEFAULT_TIMELINES_ACCESS,
    limits: config.limits,
    thumbnail: {
      url: `${base}${THUMBNAIL_PATH}`,
      url2x: `${base}${THUMBNAIL_2X_PATH}`,
      blurhash: thumb.blurhash,
      description: config.instance.title,
    },
    icons: [],
    stats: {
      userCount: stats.userCount,
      statusCount: stats.statusCount,
      domainCount: stats.domainCount,
      activeMonth: stats.activeMonth,
    },
  };
}
