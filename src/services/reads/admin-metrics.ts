/**
 * The admin dashboard's figures (Mastodon's Admin::Metrics): measures (a count per day over a
 * period, its total and the previous period's), dimensions (the top values of something over a
 * period) and retention cohorts. Each key is one statement. Everything is computed from what Roost
 * records (users and their activity days, statuses, favourites, reports, follows, media, tags) on
 * the instance's clock; a key Roost keeps nothing for answers Mastodon's shape with zeros.
 *
 * Periods are whole UTC days, as Mastodon's: from the day of `start_at` through the day of
 * `end_at`. The previous period is Mastodon's too: both ends moved back by the period's length
 * (end date − start date), so it shares its last day with the period's first.
 */
import { createRequire } from 'node:module';
import type { Services } from '../../context.ts';
import { languageName } from '../../lib/languages.ts';

const DAY_MS = 86_400_000;

export interface Period {
  /** Midnight UTC of the first day. */
  start: Date;
  /** Midnight UTC of the last day (inclusive). */
  end: Date;
}

export interface MeasureParams {
  id?: string;
  domain?: string;
}

export interface MeasureResult {
  key: string;
  unit: string | null;
  total: string;
  human_value?: string;
  previous_total?: string;
  data: { date: string; value: string; human_value?: string }[];
}

type Aggregate = 'count' | 'distinct' | 'sum';

interface MeasureSource {
  /** Rows (at timestamptz, who text, val bigint) from `$1` (inclusive) to `$2` (exclusive); `$3` is the key's param. */
  sql: string;
  aggregate: Aggregate;
  unit?: 'bytes';
  /** Whether the total is of the period (with a previous total) or of all time (instance_*). */
  totalInRange?: boolean;
  /** The param the key needs (`tag_uses[id]`, `instance_statuses[domain]`). */
  param?: 'id' | 'domain';
}

const LOCAL_STATUS = `(select 1 from statuses t where t.id = %s and t.local)`;

/** Mastodon's measure keys, in its order. */
const MEASURES: Record<string, MeasureSource> = {
  active_users: { sql: `select day::timestamptz as at, user_id::text as who, 1::bigint as val from user_activity_days where day >= $1::date and day < $2::date`, aggregate: 'distinct' },
  new_users: { sql: `select created_at as at, null::text as who, 1::bigint as val from users where created_at >= $1 and created_at < $2`, aggregate: 'count' },
  // Favourites, boosts and replies on local statuses (Mastodon counts the same three).
  interactions: {
    sql: `select f.created_at as at, null::text as who, 1::bigint as val from favourites f where f.created_at >= $1 and f.created_at < $2 and exists ${LOCAL_STATUS.replace('%s', 'f.status_id')}
          union all
          select s.created_at, null, 1 from statuses s where s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null and s.reblog_of_id is not null and exists ${LOCAL_STATUS.replace('%s', 's.reblog_of_id')}
          union all
          select s.created_at, null, 1 from statuses s where s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null and s.in_reply_to_id is not null and exists ${LOCAL_STATUS.replace('%s', 's.in_reply_to_id')}`,
    aggregate: 'count',
  },
  opened_reports: { sql: `select created_at as at, null::text as who, 1::bigint as val from reports where created_at >= $1 and created_at < $2`, aggregate: 'count' },
  resolved_reports: { sql: `select action_taken_at as at, null::text as who, 1::bigint as val from reports where action_taken_at >= $1 and action_taken_at < $2`, aggregate: 'count' },
  tag_accounts: {
    sql: `select s.created_at as at, s.account_id::text as who, 1::bigint as val from statuses_tags st join statuses s on s.id = st.status_id
           where st.tag_id = $3::text::bigint and s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null`,
    aggregate: 'distinct',
    param: 'id',
  },
  tag_uses: {
    sql: `select s.created_at as at, null::text as who, 1::bigint as val from statuses_tags st join statuses s on s.id = st.status_id
           where st.tag_id = $3::text::bigint and s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null`,
    aggregate: 'count',
    param: 'id',
  },
  tag_servers: {
    sql: `select s.created_at as at, a.domain as who, 1::bigint as val from statuses_tags st join statuses s on s.id = st.status_id join accounts a on a.id = s.account_id
           where st.tag_id = $3::text::bigint and s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null and a.domain is not null`,
    aggregate: 'distinct',
    param: 'id',
  },
  instance_accounts: {
    sql: `select created_at as at, null::text as who, 1::bigint as val from accounts where domain = $3 and created_at >= $1 and created_at < $2`,
    aggregate: 'count',
    totalInRange: false,
    param: 'domain',
  },
  instance_media_attachments: {
    sql: `select m.created_at as at, null::text as who, coalesce(m.file_size, 0)::bigint as val from media_attachments m join accounts a on a.id = m.account_id
           where a.domain = $3 and m.created_at >= $1 and m.created_at < $2`,
    aggregate: 'sum',
    unit: 'bytes',
    totalInRange: false,
    param: 'domain',
  },
  instance_reports: {
    sql: `select r.created_at as at, null::text as who, 1::bigint as val from reports r join accounts a on a.id = r.target_account_id
           where a.domain = $3 and r.created_at >= $1 and r.created_at < $2`,
    aggregate: 'count',
    totalInRange: false,
    param: 'domain',
  },
  instance_statuses: {
    sql: `select s.created_at as at, null::text as who, 1::bigint as val from statuses s join accounts a on a.id = s.account_id
           where a.domain = $3 and s.created_at >= $1 and s.created_at < $2 and s.deleted_at is null`,
    aggregate: 'count',
    totalInRange: false,
    param: 'domain',
  },
  instance_follows: {
    sql: `select f.created_at as at, null::text as who, 1::bigint as val from follows f join accounts t on t.id = f.target_account_id join accounts a on a.id = f.account_id
           where t.domain = $3 and a.domain is null and f.state = 'accepted' and f.created_at >= $1 and f.created_at < $2`,
    aggregate: 'count',
    totalInRange: false,
    param: 'domain',
  },
  instance_followers: {
    sql: `select f.created_at as at, null::text as who, 1::bigint as val from follows f join accounts t on t.id = f.target_account_id join accounts a on a.id = f.account_id
           where a.domain = $3 and t.domain is null and f.state = 'accepted' and f.created_at >= $1 and f.created_at < $2`,
    aggregate: 'count',
    totalInRange: false,
    param: 'domain',
  },
};

export const MEASURE_KEYS = Object.keys(MEASURES);

/** The param a measure key needs (`id` of a tag, `domain` of a server), or null. */
export function measureParam(key: string): 'id' | 'domain' | null {
  return MEASURES[key]?.param ?? null;
}

const dayIso = (d: Date) => `${d.toISOString().slice(0, 10)}T00:00:00Z`;
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * DAY_MS);

/** Mastodon's number_to_human_size: "0 Bytes", "1 Byte", "1.5 KB", "46.2 GB" (3 significant digits). */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'Byte' : 'Bytes'}`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  let v = bytes;
  let i = -1;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number(v.toPrecision(3))} ${units[i]}`;
}

function aggregateSql(a: Aggregate): string {
  return a === 'count' ? 'count(*)' : a === 'distinct' ? 'count(distinct who)' : 'coalesce(sum(val), 0)';
}

/** One measure over `period` (null when the key is not one of Mastodon's). */
export async function measure(services: Services, key: string, period: Period, param: string | null): Promise<MeasureResult | null> {
  const src = MEASURES[key];
  if (!src) return null;
  const lengthDays = Math.round((period.end.getTime() - period.start.getTime()) / DAY_MS);
  const endExcl = addDays(period.end, 1);
  const prevStart = addDays(period.start, -lengthDays);
  const prevEndExcl = addDays(endExcl, -lengthDays);
  const inRange = src.totalInRange !== false;
  const agg = aggregateSql(src.aggregate);
  // One statement: the rows from the previous period's start to the period's end, then the
  // count per day, the period's total and the previous period's (all-time for instance_*).
  const allTime = inRange ? '' : src.sql.replace(/ and ([a-z]\.)?created_at >= \$1 and ([a-z]\.)?created_at < \$2/, '');
  const rows = await services.db.sql.query<{ kind: string; day: string | null; v: string }>(
    `with p as (select $3::text as param), src as (${src.sql.replaceAll('$1', '$4').replaceAll('$2', '$5')})
     select 'day' as kind, to_char(date_trunc('day', at at time zone 'UTC'), 'YYYY-MM-DD') as day, ${agg}::text as v from src where at >= $1 and at < $2 group by 2
     union all select 'total', null, ${agg}::text from ${inRange ? `src where at >= $1 and at < $2` : `(${allTime}) as t`}
     ${inRange ? `union all select 'previous', null, ${agg}::text from src where at >= $4 and at < $6` : ''}`,
    inRange
      ? [period.start, endExcl, param, prevStart, endExcl, prevEndExcl]
      : [period.start, endExcl, param, period.start, endExcl],
  );
  const byDay = new Map(rows.filter((r) => r.kind === 'day').map((r) => [r.day!, r.v]));
  const total = rows.find((r) => r.kind === 'total')?.v ?? '0';
  const data: MeasureResult['data'] = [];
  for (let d = period.start; d.getTime() <= period.end.getTime(); d = addDays(d, 1)) {
    const value = byDay.get(d.toISOString().slice(0, 10)) ?? '0';
    data.push(src.unit === 'bytes' ? { date: dayIso(d), value, human_value: humanSize(Number(value)) } : { date: dayIso(d), value });
  }
  return {
    key,
    unit: src.unit ?? null,
    total,
    ...(src.unit === 'bytes' ? { human_value: humanSize(Number(total)) } : {}),
    ...(inRange ? { previous_total: rows.find((r) => r.kind === 'previous')?.v ?? '0' } : {}),
    data,
  };
}

/** Whether the tag exists (the tag_* keys answer 404 for an unknown one, as Mastodon's Tag.find). */
export async function tagExists(services: Services, id: string): Promise<boolean> {
  return (await services.db.sql.query(`select 1 from tags where id = $1`, [id])).length > 0;
}

// --- dimensions ----------------------------------------------------------------------------

export interface DimensionItem {
  key: string;
  human_key: string;
  value: string;
  unit?: string;
  human_value?: string;
}

interface DimensionSource {
  /** Rows (key, value) for `$1` (start, inclusive), `$2` (end, exclusive), `$3` limit, `$4` the key's param. */
  sql?: string;
  param?: 'id' | 'domain';
  human?: (key: string) => string;
}

const lang = (k: string) => languageName(k) ?? k;

const DIMENSIONS: Record<string, DimensionSource> = {
  // The locales of the users active in the period (Mastodon's LanguagesDimension).
  languages: {
    sql: `select u.locale as key, count(*)::text as value from users u
           where u.locale is not null and exists (select 1 from user_activity_days d where d.user_id = u.id and d.day >= $1::date and d.day < $2::date)
           group by u.locale order by count(*) desc, u.locale limit $3`,
    human: lang,
  },
  // The apps local statuses were posted with ("Web" without one).
  sources: {
    sql: `select coalesce(o.name, 'Web') as key, count(*)::text as value from statuses s left join oauth_applications o on o.id = s.application_id
           where s.local and s.deleted_at is null and s.reblog_of_id is null and s.created_at >= $1 and s.created_at < $2
           group by 1 order by count(*) desc, 1 limit $3`,
  },
  servers: {
    sql: `select a.domain as key, count(*)::text as value from statuses s join accounts a on a.id = s.account_id
           where a.domain is not null and s.deleted_at is null and s.created_at >= $1 and s.created_at < $2
           group by a.domain order by count(*) desc, a.domain limit $3`,
  },
  space_usage: {},
  software_versions: {},
  tag_servers: {
    sql: `select a.domain as key, count(*)::text as value from statuses_tags st join statuses s on s.id = st.status_id join accounts a on a.id = s.account_id
           where st.tag_id = $4::text::bigint and a.domain is not null and s.deleted_at is null and s.created_at >= $1 and s.created_at < $2
           group by a.domain order by count(*) desc, a.domain limit $3`,
    param: 'id',
  },
  tag_languages: {
    sql: `select s.language as key, count(*)::text as value from statuses_tags st join statuses s on s.id = st.status_id
           where st.tag_id = $4::text::bigint and s.language is not null and s.deleted_at is null and s.created_at >= $1 and s.created_at < $2
           group by s.language order by count(*) desc, s.language limit $3`,
    param: 'id',
    human: lang,
  },
  // The server's accounts most followed from here.
  instance_accounts: {
    sql: `select a.username as key, count(*)::text as value from follows f join accounts a on a.id = f.target_account_id join accounts l on l.id = f.account_id
           where a.domain = $4 and l.domain is null and f.state = 'accepted' and $1::timestamptz is not null and $2::timestamptz is not null
           group by a.username order by count(*) desc, a.username limit $3`,
    param: 'domain',
  },
  instance_languages: {
    sql: `select s.language as key, count(*)::text as value from statuses s join accounts a on a.id = s.account_id
           where a.domain = $4 and s.language is not null and s.deleted_at is null and s.created_at >= $1 and s.created_at < $2
           group by s.language order by count(*) desc, s.language limit $3`,
    param: 'domain',
    human: lang,
  },
};

export const DIMENSION_KEYS = Object.keys(DIMENSIONS);

export function dimensionParam(key: string): 'id' | 'domain' | null {
  return DIMENSIONS[key]?.param ?? null;
}

let sharpVips: string | null | undefined;
function vipsVersion(): string | null {
  if (sharpVips === undefined) {
    try {
      sharpVips = (createRequire(import.meta.url)('sharp') as { versions?: { vips?: string } }).versions?.vips ?? null;
    } catch {
      sharpVips = null;
    }
  }
  return sharpVips;
}

/** One dimension (null when the key is not one of Mastodon's). */
export async function dimension(services: Services, key: string, period: Period, limit: number, param: string | null): Promise<{ key: string; data: DimensionItem[] } | null> {
  const src = DIMENSIONS[key];
  if (!src) return null;
  if (key === 'space_usage') {
    const [row] = await services.db.sql.query<{ db: string; media: string }>(
      `select pg_database_size(current_database())::text as db, (select coalesce(sum(file_size), 0) from media_attachments where remote_url is null)::text as media`,
    );
    const item = (k: string, human: string, v: string): DimensionItem => ({ key: k, human_key: human, value: v, unit: 'bytes', human_value: humanSize(Number(v)) });
    return { key, data: [item('postgresql', 'PostgreSQL', row!.db), item('media', 'Media storage', row!.media)] };
  }
  if (key === 'software_versions') {
    const [row] = await services.db.sql.query<{ v: string }>(`select current_setting('server_version') as v`);
    const item = (k: string, human: string, v: string): DimensionItem => ({ key: k, human_key: human, value: v, human_value: v });
    const vips = vipsVersion();
    return {
      key,
      data: [
        item('roost', 'Roost', services.version),
        item('nodejs', 'Node.js', process.versions.node),
        item('postgresql', 'PostgreSQL', row!.v.split(' ')[0]!),
        ...(vips ? [item('libvips', 'libvips', vips)] : []),
      ],
    };
  }
  // The CTE names $4 for the keys that take no param (PostgreSQL must know every parameter's type).
  const rows = await services.db.sql.query<{ key: string; value: string }>(`with p as (select $4::text as param) ${src.sql!}`, [period.start, addDays(period.end, 1), limit, param]);
  return { key, data: rows.map((r) => ({ key: r.key, human_key: src.human ? src.human(r.key) : r.key, value: r.value })) };
}

// --- retention -----------------------------------------------------------------------------

export interface Cohort {
  period: string;
  frequency: 'day' | 'month';
  data: { date: string; rate: number; value: string }[];
}

/**
 * Retention cohorts (Mastodon's Admin::Metrics::Retention): users grouped by the day or month they
 * signed up, from the bucket of `start` to the bucket of `end`; for each later bucket, how many of
 * them were active in it or after (Mastodon reads the last sign-in; Roost its activity days and
 * the last sign-in), and that count over the cohort's size (`rate`). One statement.
 */
export async function retention(services: Services, period: Period, frequency: 'day' | 'month'): Promise<Cohort[]> {
  const rows = await services.db.sql.query<{ cohort: string; bucket: string; value: string; size: string }>(
    `with axis as (
       select c::date as cohort, b::date as bucket
         from generate_series(date_trunc($3, $1::timestamp), date_trunc($3, $2::timestamp), ('1 ' || $3)::interval) c,
              generate_series(date_trunc($3, $1::timestamp), date_trunc($3, $2::timestamp), ('1 ' || $3)::interval) b
        where b >= c
     ),
     members as (
       select date_trunc($3, u.created_at at time zone 'UTC')::date as cohort,
              greatest((select max(d.day) from user_activity_days d where d.user_id = u.id), (u.current_sign_in_at at time zone 'UTC')::date) as last_active
         from users u
        where u.created_at >= date_trunc($3, $1::timestamp) at time zone 'UTC'
          and u.created_at < (date_trunc($3, $2::timestamp) + ('1 ' || $3)::interval) at time zone 'UTC'
     )
     select to_char(a.cohort, 'YYYY-MM-DD') as cohort, to_char(a.bucket, 'YYYY-MM-DD') as bucket,
            (select count(*) from members m where m.cohort = a.cohort and date_trunc($3, m.last_active::timestamp)::date >= a.bucket)::text as value,
            (select count(*) from members m where m.cohort = a.cohort)::text as size
       from axis a order by a.cohort, a.bucket`,
    [period.start.toISOString().slice(0, 10), period.end.toISOString().slice(0, 10), frequency],
  );
  const out = new Map<string, Cohort>();
  const stamp = (d: string) => `${d}T00:00:00+00:00`;
  for (const r of rows) {
    let c = out.get(r.cohort);
    if (!c) out.set(r.cohort, (c = { period: stamp(r.cohort), frequency, data: [] }));
    c.data.push({ date: stamp(r.bucket), rate: Number(r.value) / Math.max(Number(r.size), 1), value: r.value });
  }
  return [...out.values()];
}
