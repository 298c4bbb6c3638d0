/**
 * Statuses on the read side: who may see a status (one SQL predicate, used by every read), pages
 * of status ids (an account's statuses, a thread, who favourited or reblogged), and the batched
 * view that renders a page of statuses with a fixed number of statements whatever its size:
 *
 *   1. ONE statement for the statuses and the originals they reblog, each with its counters,
 *      application, preview card, mentions, hashtags, media attachments (in order), poll with the
 *      viewer's own votes, the viewer's flags (favourited, reblogged, bookmarked, pinned, muted),
 *      and, with a viewer and a filter context (home, public, thread, account …), one more row with
 *      the viewer's filters in force (the lists as JSON);
 *   2. their authors (loadAccountPage: one statement);
 *   3. the custom emojis their texts and poll options use (reads/emojis.ts: one statement, only
 *      when some text names a `:shortcode:`);
 *   4. the filter engine matches the filters on each status (a reblog on the status it reblogs):
 *      `view.filtered` feeds Status#filtered, `view.hidden` holds the statuses a `hide` filter removes.
 *
 * The statement is a named prepared statement on PostgreSQL (db/prepared.ts): a page sends its
 * parameters only.
 */
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import type { AccountView } from '../../serializers/account.ts';
import type { StatusView, StatusRow, StatusQuoteRow } from '../../serializers/status.ts';
import type { PreviewCardRow } from '../../serializers/preview-card.ts';
import { loadAccountPage } from './accounts.ts';
import { hasMediaSql, mediaRowFrom } from './media.ts';
import { mediaStorage } from '../media-storage.ts';
import { loadEmojisFor } from './emojis.ts';
import { emojiShortcodes } from '../../lib/emoji-shortcodes.ts';
import { applyFilters, compileFilterSet, filterableText, type FilterContext } from '../../lib/filter-engine.ts';
import { filterFromRaw, type RawFilter } from './filters.ts';
import type { FilterRow } from '../../serializers/filter.ts';
import { pollFromJson, pollJsonSql } from './poll-rows.ts';
import { prepared } from '../../db/prepared.ts';
import { accountDomainBlockedBySql, blocksSql, mutedBySql, threadMutedBySql } from '../../db/audience.ts';

import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

/**
 * SQL: the status `s` may be seen by the viewer `v` (a bigint SQL expression, null for nobody
 * signed in). As Mastodon's StatusPolicy#show?: not deleted, the author not suspended; the author
 * sees everything; direct and limited statuses only the mentioned; private ones followers and the
 * mentioned; public and unlisted everybody the author does not block.
 */
export function visibleSql(s: string, v: string): string {
  return `(${s}.deleted_at is null
    and not exists (select 1 from accounts sa where sa.id = ${s}.account_id and sa.suspended_at is not null)
    and (${s}.account_id = ${v}
      or (${v} is null and ${s}.visibility in ('public', 'unlisted'))
      or (${v} is not null
          and not ${blocksSql(`${s}.account_id`, v)}
          and (${s}.visibility in ('public', 'unlisted')
            or exists (select 1 from mentions vm where vm.status_id = ${s}.id and vm.account_id = ${v})
            or (${s}.visibility = 'private' and exists (
                  select 1 from follows vf where vf.account_id = ${v} and vf.target_account_id = ${s}.account_id and vf.state = 'accepted'))))))`;
}

/** A reblog is seen when it and its original are: the original's predicate, for a row `s`. */
export function originalVisibleSql(s: string, v: string): string {
  return `(${s}.reblog_of_id is null or exists (select 1 from statuses o where o.id = ${s}.reblog_of_id and ${visibleSql('o', v)}))`;
}

export interface StatusFacts {
  id: string;
  accountId: string;
  visibility: string;
  reblogOfId: string | null;
  inReplyToId: string | null;
  createdAt: Date;
}

function factsFromRow(r: Record<string, unknown>): StatusFacts {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    visibility: r.visibility as string,
    reblogOfId: r.reblog_of_id === null ? null : String(r.reblog_of_id),
    inReplyToId: r.in_reply_to_id === null ? null : String(r.in_reply_to_id),
    createdAt: new Date(r.created_at as string),
  };
}

const VISIBLE_STATUS_SQL = prepared(
  `select s.id::text, s.account_id::text, s.visibility, s.reblog_of_id::text, s.in_reply_to_id::text, s.created_at
       from statuses s where s.id = $1 and ${visibleSql('s', '$2::bigint')} and ${originalVisibleSql('s', '$2::bigint')}`,
);

/** The status `id` if the viewer may see it (and its original, if a reblog), else null. */
export async function findVisibleStatus(services: Services, id: string, viewerId: string | null): Promise<StatusFacts | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<Record<string, unknown>>(
    VISIBLE_STATUS_SQL,
    [id, viewerId],
  );
  return row ? factsFromRow(row) : null;
}

/** The ids among `ids` the viewer may see, in the order given (unknown and hidden ones left out). */
export async function visibleStatusIds(services: Services, ids: readonly string[], viewerId: string | null): Promise<string[]> {
  const wanted = [...new Set(ids)].filter(isId);
  if (wanted.length === 0) return [];
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s where s.id = any($1::bigint[]) and ${visibleSql('s', '$2::bigint')} and ${originalVisibleSql('s', '$2::bigint')}`,
    [wanted, viewerId],
  );
  const seen = new Set(rows.map((r) => r.id));
  return wanted.filter((id) => seen.has(id));
}

export interface AccountStatusesFilter {
  excludeReplies?: boolean;
  excludeReblogs?: boolean;
  onlyMedia?: boolean;
  pinned?: boolean;
  tagged?: string | null;
}

/** An account's statuses the viewer may see, newest first (pinned: its pins, by pin order). */
export async function accountStatusesPage(
  services: Services,
  accountId: string,
  viewerId: string | null,
  p: PageParams,
  f: AccountStatusesFilter,
): Promise<{ statusIds: string[]; cursorIds: string[] }> {
  if (f.pinned) {
    const page = pageSql('sp.id', p, 3);
    const rows = await services.db.sql.query<{ id: string; cursor: string }>(
      `select s.id::text, sp.id::text as cursor from status_pins sp join statuses s on s.id = sp.status_id
        where sp.account_id = $1 and ${visibleSql('s', '$2::bigint')}${page.where}
        order by ${page.order} limit ${p.limit}`,
      [accountId, viewerId, ...page.params],
    );
    const ordered = newestFirst(rows, p);
    return { statusIds: ordered.map((r) => r.id), cursorIds: ordered.map((r) => r.cursor) };
  }
  const params: unknown[] = [accountId, viewerId];
  const where: string[] = [];
  if (f.excludeReplies) where.push(`(s.in_reply_to_id is null or s.in_reply_to_account_id = s.account_id)`);
  if (f.excludeReblogs) where.push(`s.reblog_of_id is null`);
  if (f.onlyMedia) where.push(hasMediaSql('s'));
  if (f.tagged) {
    params.push(f.tagged);
    where.push(`exists (select 1 from statuses_tags st join tags t on t.id = st.tag_id where st.status_id = s.id and lower(t.name) = lower($${params.length}))`);
  }
  const page = pageSql('s.id', p, params.length + 1);
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s
      where s.account_id = $1 and ${visibleSql('s', '$2::bigint')} and ${originalVisibleSql('s', '$2::bigint')}
        ${where.map((w) => `and ${w}`).join(' ')}${page.where}
      order by ${page.order} limit ${p.limit}`,
    [...params, ...page.params],
  );
  const ids = newestFirst(rows, p).map((r) => r.id);
  return { statusIds: ids, cursorIds: ids };
}

/** Mastodon's limits on a thread's context: signed out (40 ancestors, 60 descendants, depth 20) and signed in. */
const CONTEXT_LIMITS = {
  anonymous: { ancestors: 40, descendants: 60, depth: 20 },
  user: { ancestors: 4096, descendants: 4096, depth: 4096 },
};

/** The thread around a status: the ancestors (oldest first) and descendants (depth first) the viewer may see. */
export async function statusContext(
  services: Services,
  status: StatusFacts,
  viewerId: string | null,
): Promise<{ ancestors: string[]; descendants: string[] }> {
  const limits = viewerId ? CONTEXT_LIMITS.user : CONTEXT_LIMITS.anonymous;
  const ancestors = await services.db.sql.query<{ id: string }>(
    `with recursive up(id, parent, depth) as (
       select s.id, s.in_reply_to_id, 0 from statuses s where s.id = $1
       union all
       select s.id, s.in_reply_to_id, up.depth + 1 from statuses s join up on s.id = up.parent where up.depth < ${limits.ancestors}
     )
     select s.id::text from up join statuses s on s.id = up.id
      where up.depth > 0 and ${visibleSql('s', '$2::bigint')}
      order by up.depth desc`,
    [status.id, viewerId],
  );
  const descendants = await services.db.sql.query<{ id: string }>(
    `with recursive down(id, path, depth) as (
       select s.id, array[s.id], 1 from statuses s where s.in_reply_to_id = $1
       union all
       select s.id, down.path || s.id, down.depth + 1 from statuses s join down on s.in_reply_to_id = down.id
        where down.depth < ${limits.depth}
     )
     select s.id::text from down join statuses s on s.id = down.id
      where ${visibleSql('s', '$2::bigint')}
      order by down.path limit ${limits.descendants}`,
    [status.id, viewerId],
  );
  return { ancestors: ancestors.map((r) => r.id), descendants: descendants.map((r) => r.id) };
}

/** The accounts that favourited (by favourite id) or reblogged (by reblog id, public and unlisted reblogs) a status, newest first. */
export async function statusActorsPage(
  services: Services,
  statusId: string,
  which: 'favourited_by' | 'reblogged_by',
  p: PageParams,
): Promise<{ accountIds: string[]; cursorIds: string[] }> {
  const table = which === 'favourited_by' ? 'favourites x' : 'statuses x';
  // Reblogs: the public and unlisted ones only (Mastodon's distributable_visibility); a
  // followers-only reblog is not shown to everyone.
  const on = which === 'favourited_by' ? 'x.status_id = $1' : `x.reblog_of_id = $1 and x.deleted_at is null and x.visibility in ('public', 'unlisted')`;
  const page = pageSql('x.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; account_id: string }>(
    `select x.id::text, x.account_id::text from ${table} join accounts a on a.id = x.account_id
      where ${on} and a.suspended_at is null${page.where} order by ${page.order} limit ${p.limit}`,
    [statusId, ...page.params],
  );
  const ordered = newestFirst(rows, p);
  return { accountIds: ordered.map((r) => r.account_id), cursorIds: ordered.map((r) => r.id) };
}

/** SQL: the preview card `pc` as the JSON object {@link cardFromRow} reads (`originalUrl`: the link as the status wrote it). */
export function cardJsonSql(pc: string, originalUrl: string): string {
  return `json_build_object('card_original_url', ${originalUrl}, 'card_url', ${pc}.url, 'card_title', ${pc}.title,
     'card_description', ${pc}.description, 'card_language', ${pc}.language, 'card_type', ${pc}.type, 'card_author_name', ${pc}.author_name,
     'card_author_url', ${pc}.author_url, 'card_provider_name', ${pc}.provider_name, 'card_provider_url', ${pc}.provider_url,
     'card_html', ${pc}.html, 'card_width', ${pc}.width, 'card_height', ${pc}.height, 'card_image_url', ${pc}.image_url,
     'card_image_description', ${pc}.image_description, 'card_embed_url', ${pc}.embed_url, 'card_blurhash', ${pc}.blurhash,
     'card_published_at', ${pc}.published_at)`;
}

/** A preview card read from {@link cardJsonSql}'s object. */
export function cardFromRow(r: Record<string, unknown>): PreviewCardRow {
  const str = (k: string) => (r[k] as string | null) ?? '';
  return {
    url: str('card_url'),
    originalUrl: (r.card_original_url as string | null) ?? null,
    title: str('card_title'),
    description: str('card_description'),
    language: (r.card_language as string | null) ?? null,
    type: r.card_type as PreviewCardRow['type'],
    authorName: str('card_author_name'),
    authorUrl: str('card_author_url'),
    providerName: str('card_provider_name'),
    providerUrl: str('card_provider_url'),
    html: str('card_html'),
    width: Number(r.card_width),
    height: Number(r.card_height),
    imageUrl: (r.card_image_url as string | null) ?? null,
    imageDescription: str('card_image_description'),
    embedUrl: str('card_embed_url'),
    blurhash: (r.card_blurhash as string | null) ?? null,
    publishedAt: r.card_published_at ? new Date(r.card_published_at as string) : null,
  };
}

/**
 * {@link loadStatusPage}'s statement: per status of the page ($1) and original it reblogs, its row
 * with counters, application and preview card (as JSON), and its mentions (silent
 * ones left out), hashtags, media attachments in order, poll (not a deleted one) with the viewer's
 * ($2; $5 as text) votes, the viewer's flags; then, when $3, one more row (id null) with the
 * viewer's filters in force at $4, each with its keywords and statuses. Lists come as JSON.
 */
const STATUS_COLUMNS = [
  's.id::text as id', 's.account_id::text as account_id', 's.uri', 's.url', 's.text', 's.content', 's.spoiler_text', 's.visibility',
  's.sensitive', 's.language', 's.in_reply_to_id::text as in_reply_to_id', 's.in_reply_to_account_id::text as in_reply_to_account_id',
  's.reblog_of_id::text as reblog_of_id', 's.created_at', 's.edited_at', 's.application_id::text as application_id',
  'coalesce(st.replies_count, 0) as replies_count',
  // A remote status's counts as its origin reported them (untrusted) when larger than Roost's own.
  'greatest(coalesce(st.reblogs_count, 0), coalesce(st.untrusted_reblogs_count, 0)) as reblogs_count',
  'greatest(coalesce(st.favourites_count, 0), coalesce(st.untrusted_favourites_count, 0)) as favourites_count', 'app.name as app_name', 'app.website as app_website',
  `case when pc.id is not null then ${cardJsonSql('pc', 'pcs.url')} end as card`,
  `(select json_agg(json_build_object('id', a.id::text, 'username', a.username, 'domain', a.domain, 'url', coalesce(a.url, a.uri)) order by a.id::text)
     from mentions m join accounts a on a.id = m.account_id where m.status_id = s.id and not m.silent) as mentions`,
  `(select json_agg(t.name order by t.id::text) from statuses_tags xt join tags t on t.id = xt.tag_id where xt.status_id = s.id) as tags`,
  `(select json_agg(json_build_object('id', m.id::text, 'account_id', m.account_id::text, 'status_id', m.status_id::text,
            'type', m.type, 'processing', m.processing, 'file_key', m.file_key, 'small_key', m.small_key,
            'description', m.description, 'focus_x', m.focus_x, 'focus_y', m.focus_y, 'meta', m.meta,
            'blurhash', m.blurhash, 'remote_url', m.remote_url) order by m.position, m.id)
     from media_attachments m where m.status_id = s.id) as media`,
  `(select ${pollJsonSql('p', 'v')}
     from polls p left join poll_votes v on v.poll_id = p.id and v.voter = $5::text
    where p.status_id = s.id and p.state <> 'deleted' limit 1) as poll`,
  `$2::bigint is not null and exists (select 1 from favourites f where f.status_id = s.id and f.account_id = $2::bigint) as favourited`,
  `$2::bigint is not null and exists (select 1 from statuses r where r.reblog_of_id = s.id and r.account_id = $2::bigint and r.deleted_at is null) as reblogged`,
  `$2::bigint is not null and exists (select 1 from bookmarks b where b.status_id = s.id and b.account_id = $2::bigint) as bookmarked`,
  `$2::bigint is not null and exists (select 1 from status_pins sp where sp.status_id = s.id and sp.account_id = $2::bigint) as pinned`,
  `$2::bigint is not null and ${threadMutedBySql('$2::bigint', 's.conversation_id')} as muted`,
  // Quotes (Mastodon 4.5): the policy (a local status's unset one is public), the accepted quotes,
  // whether the viewer follows the author (a followers policy), and the status's own quote with
  // what its rendering needs about the quoted post for this viewer.
  `coalesce(s.quote_policy, case when s.local then 'public' end) as quote_policy`,
  'coalesce(st.quotes_count, 0) as quotes_count',
  `$2::bigint is not null and exists (select 1 from follows vf where vf.account_id = $2::bigint and vf.target_account_id = s.account_id and vf.state = 'accepted') as viewer_follows`,
  `(select json_build_object('state', q.state, 'legacy', q.legacy, 'quoted_status_id', q.quoted_status_id::text,
            'gone', qs.id is null or qs.deleted_at is not null,
            'visible', qs.id is not null and ${visibleSql('qs', '$2::bigint')},
            'blocked', $2::bigint is not null and qs.id is not null and ${blocksSql('$2::bigint', 'qs.account_id')},
            'domain_blocked', $2::bigint is not null and qs.id is not null and ${accountDomainBlockedBySql('$2::bigint', 'qs.account_id')},
            'muted', $2::bigint is not null and qs.id is not null and ${mutedBySql('$2::bigint', 'qs.account_id', '$4::timestamptz')})
     from quotes q left join statuses qs on qs.id = q.quoted_status_id where q.status_id = s.id) as quote`,
];

const STATUS_PAGE_SQL = prepared(
  `with page as (
     select unnest(array_cat($1::bigint[], array(select r.reblog_of_id from statuses r where r.id = any($1::bigint[]) and r.reblog_of_id is not null))) as id
   ), quoted as (
     select q.quoted_status_id as id from quotes q join statuses qs on qs.id = q.quoted_status_id
      where q.status_id in (select id from page) and q.state = 'accepted' and ${visibleSql('qs', '$2::bigint')}
   )
   select ${STATUS_COLUMNS.join(', ')}, null::json as filters
     from statuses s
     left join status_stats st on st.status_id = s.id
     left join oauth_applications app on app.id = s.application_id
     left join preview_cards_statuses pcs on pcs.status_id = s.id
     left join preview_cards pc on pc.id = pcs.preview_card_id
    where s.id in (select id from page union select id from quoted)
   union all
   select ${STATUS_COLUMNS.map(() => 'null').join(', ')},
          coalesce((select json_agg(json_build_object('id', f.id::text, 'title', f.title, 'context', f.context, 'action', f.action,
                      'expires_at', f.expires_at,
                      'keywords', (select json_agg(json_build_object('id', k.id::text, 'keyword', k.keyword, 'whole_word', k.whole_word) order by k.id)
                                     from filter_keywords k where k.filter_id = f.id),
                      'statuses', (select json_agg(json_build_object('id', fs.id::text, 'status_id', fs.status_id::text) order by fs.id)
                                     from filter_statuses fs where fs.filter_id = f.id)) order by f.id)
                      from filters f where f.account_id = $2::bigint and (f.expires_at is null or f.expires_at > $4::timestamptz)), '[]'::json)
    where $3::boolean`,
);

/** A row of {@link STATUS_PAGE_SQL} (the filters row has only `filters`). */
interface PageRow {
  id: string | null;
  account_id: string;
  uri: string;
  url: string | null;
  text: string;
  content: string;
  spoiler_text: string;
  visibility: StatusRow['visibility'];
  sensitive: boolean;
  language: string | null;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  reblog_of_id: string | null;
  created_at: string | Date;
  edited_at: string | Date | null;
  application_id: string | null;
  replies_count: number | string;
  reblogs_count: number | string;
  favourites_count: number | string;
  app_name: string | null;
  app_website: string | null;
  card: unknown;
  mentions: unknown;
  tags: unknown;
  media: unknown;
  poll: unknown;
  favourited: boolean;
  reblogged: boolean;
  bookmarked: boolean;
  pinned: boolean;
  muted: boolean;
  quote_policy: string | null;
  quotes_count: number | string;
  viewer_follows: boolean;
  quote: unknown;
  filters: unknown;
}

/** A status's quote as the page statement reads it (null: it quotes nothing). */
function quoteFromJson(v: unknown): StatusQuoteRow | null {
  const q = jsonValue<{ state: string; legacy: boolean; quoted_status_id: string | null; gone: boolean; visible: boolean; blocked: boolean; domain_blocked: boolean; muted: boolean }>(v);
  if (!q) return null;
  return {
    state: q.state, legacy: q.legacy, quotedStatusId: q.quoted_status_id, gone: q.gone, visible: q.visible,
    blocked: q.blocked, domainBlocked: q.domain_blocked, muted: q.muted,
  };
}

/** A json column's value (the drivers differ: parsed already, or text). */
function jsonValue<T>(v: unknown): T | null {
  return v === null || v === undefined ? null : typeof v === 'string' ? (JSON.parse(v) as T) : (v as T);
}

function jsonList<T>(v: unknown): T[] {
  return jsonValue<T[]>(v) ?? [];
}

/** A page of statuses by id: the rows (with reblogged originals), their authors, mentions, tags and the viewer's flags. */
export async function loadStatusPage(
  services: Services,
  ids: readonly string[],
  viewerId: string | null,
  opts: {
    /** The viewer's filters of this context apply; `'any'`: all of them fill `filtered`, none hides (a status asked for by id). */
    filterContext?: FilterContext | 'any';
    /** More accounts to read with the statuses' authors, in the same statement (a notification page's), into `view.accounts`. */
    alsoAccounts?: readonly string[];
  } = {},
): Promise<{ statuses: Map<string, StatusRow>; view: StatusView }> {
  const statuses = new Map<string, StatusRow>();
  const view: StatusView = {
    baseUrl: services.config.publicUrl,
    viewerId,
    accounts: new Map<string, Account>(),
    accountView: {} as AccountView,
    mentions: new Map(),
    tags: new Map(),
    flags: new Map(),
    media: new Map(),
    mediaBaseUrl: mediaStorage(services).baseUrl,
    polls: new Map(),
    now: services.clock.now(),
  };
  const wanted = [...new Set(ids)].filter(isId);
  const also = opts.alsoAccounts ?? [];
  if (wanted.length === 0 && also.length === 0) return { statuses, view };
  const withFilters = viewerId !== null && opts.filterContext !== undefined;
  const rows = wanted.length ? await services.db.sql.query<PageRow>(STATUS_PAGE_SQL, [wanted, viewerId, withFilters, view.now, viewerId]) : [];
  let filters: FilterRow[] = [];
  view.media = new Map();
  view.polls = new Map();
  for (const r of rows) {
    if (r.id === null) {
      filters = jsonList<RawFilter>(r.filters).map(filterFromRaw);
      continue;
    }
    const id = r.id;
    const card = jsonValue<Record<string, unknown>>(r.card);
    statuses.set(id, {
      id,
      accountId: r.account_id,
      uri: r.uri,
      url: r.url ?? null,
      text: r.text,
      content: r.content,
      spoilerText: r.spoiler_text,
      visibility: r.visibility,
      sensitive: r.sensitive,
      language: r.language ?? null,
      inReplyToId: r.in_reply_to_id ?? null,
      inReplyToAccountId: r.in_reply_to_account_id ?? null,
      reblogOfId: r.reblog_of_id ?? null,
      createdAt: new Date(r.created_at),
      editedAt: r.edited_at ? new Date(r.edited_at) : null,
      application: r.application_id ? { name: r.app_name ?? '', website: r.app_website || null } : null,
      counts: { replies: Number(r.replies_count), reblogs: Number(r.reblogs_count), favourites: Number(r.favourites_count), quotes: Number(r.quotes_count) },
      card: card ? cardFromRow(card) : null,
      quotePolicy: r.quote_policy ?? null,
      viewerFollows: r.viewer_follows,
      quote: quoteFromJson(r.quote),
    });
    const mentions = jsonList<{ id: string; username: string; domain: string | null; url: string | null }>(r.mentions);
    if (mentions.length) view.mentions.set(id, mentions.map((m) => ({ id: m.id, username: m.username, domain: m.domain, url: m.url ?? '' })));
    const tags = jsonList<string>(r.tags);
    if (tags.length) view.tags.set(id, tags);
    const media = jsonList<Record<string, unknown>>(r.media);
    if (media.length) view.media.set(id, media.map(mediaRowFrom));
    const poll = pollFromJson(r.poll);
    if (poll) view.polls.set(id, poll);
    if (viewerId) view.flags.set(id, { favourited: r.favourited, reblogged: r.reblogged, bookmarked: r.bookmarked, pinned: r.pinned, muted: r.muted });
  }
  const page = await loadAccountPage(services, [...new Set([...[...statuses.values()].map((s) => s.accountId), ...also])]);
  view.accounts = page.accounts;
  view.accountView = page.view;
  // Custom emojis in texts, content warnings and poll options, on each author's domain: one more
  // statement, only when some text names one.
  const domainOf = (accountId: string) => view.accounts.get(accountId)?.domain ?? null;
  view.emojis = await loadEmojisFor(services, [
    ...[...statuses.values()].map((s) => ({ owner: s.id, domain: domainOf(s.accountId), shortcodes: emojiShortcodes(s.spoilerText, s.text, s.content) })),
    ...[...view.polls.values()].map((p) => ({ owner: `poll ${p.id}`, domain: domainOf(p.accountId), shortcodes: emojiShortcodes(...p.options) })),
  ]);
  if (viewerId && opts.filterContext) applyViewerFilters(filters, statuses, view, viewerId, opts.filterContext);
  return { statuses, view };
}

/** Step 4: the viewer's filters (read in step 1) on the page; results into view.filtered and view.hidden. */
function applyViewerFilters(filters: FilterRow[], statuses: Map<string, StatusRow>, view: StatusView, viewerId: string, context: FilterContext | 'any'): void {
  const now = view.now!;
  const set = compileFilterSet(viewerId, filters);
  if (set.filters.length === 0) return;
  view.filtered = new Map();
  view.hidden = new Set();
  const texts = new Map<string, string>();
  const textOf = (s: StatusRow): string => {
    let t = texts.get(s.id);
    if (t === undefined) {
      const poll = view.polls?.get(s.id);
      t = filterableText({
        spoilerText: s.spoilerText,
        contentHtml: s.content,
        pollOptions: poll ? poll.options : [],
        mediaDescriptions: (view.media?.get(s.id) ?? []).map((m) => m.description),
      });
      texts.set(s.id, t);
    }
    return t;
  };
  const reblogs: StatusRow[] = [];
  for (const s of statuses.values()) {
    const proper = s.reblogOfId ? statuses.get(s.reblogOfId) : s;
    if (!proper) continue;
    const outcome = applyFilters(set, { id: s.id, reblogOfId: s.reblogOfId, accountId: s.accountId, text: textOf(proper) }, context, now);
    if (outcome.filtered.length) view.filtered.set(s.id, outcome.filtered);
    if (outcome.hidden && context !== 'any') view.hidden.add(s.id);
    if (s.reblogOfId) reblogs.push(s);
  }
  // As Mastodon: the status a reblog carries shows the reblog's results.
  for (const r of reblogs) {
    const results = view.filtered.get(r.id);
    if (results) view.filtered.set(r.reblogOfId!, results);
  }
}

/** Mastodon's StatusSource: the status's plain text and content warning (null: no such status). */
export async function statusSource(services: Services, id: string): Promise<{ id: string; text: string; spoiler_text: string } | null> {
  const [row] = await services.db.sql.query<{ text: string; spoiler_text: string }>(`select text, spoiler_text from statuses where id = $1`, [id]);
  return row ? { id, text: row.text, spoiler_text: row.spoiler_text } : null;
}
