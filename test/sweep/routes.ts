/**
 * THE ROUTE TABLE of the bad-input sweep (test/sweep/sweep.test.ts): every route the router
 * registers, with what it needs (auth and scope) and what it takes (path params and params).
 * A guard test fails when the router and this table disagree, so a new route is covered by adding
 * one line here, nothing else: the sweep generates its malformed inputs from these lines.
 */

/** What a route needs from the caller. */
export type Auth =
  /** Nothing; a token that comes along is ignored. */
  | 'public'
  /** Public, but a token that comes along must carry the scope (Mastodon's authorize_if_got_token!). */
  | 'public+scope'
  /** A user's token with the scope. */
  | 'user'
  /** A user's token with the scope, and a role with the route's permission (the admin API). */
  | 'admin'
  /** An app's client-credentials token with the scope (sign-up). */
  | 'app'
  /** Any valid token (apps/verify_credentials). */
  | 'token'
  /** OAuth client credentials (Basic auth or client_id/client_secret). */
  | 'client'
  /** The streaming API: a user's token with the scope; every token problem is a 401, as Mastodon's streaming server. */
  | 'streaming';

/** The kind of a param: decides which malformed values the sweep sends. */
export type Kind =
  | 'string'
  | 'text' // long free text (note, comment)
  | 'int'
  | 'bool'
  | 'id' // one snowflake id
  | 'ids' // an array of ids (id[]=)
  | 'strings' // an array of strings (languages[])
  | 'domain'
  | 'url'
  | 'scopes'
  | 'file'
  | 'hash' // a nested object (source[privacy]=)
  | 'fields'; // fields_attributes[0][name]=

/** What a path param names: the sweep fills a valid one for the params cases. */
export type PathKind = 'account' | 'follow_request' | 'media' | 'username' | 'status' | 'attachment' | 'poll' | 'domain_block' | 'domain_allow' | 'conversation' | 'list' | 'scheduled_status' | 'featured_tag' | 'custom_emoji' | 'filter' | 'filter_keyword' | 'filter_status' | 'notification' | 'notification_group' | 'notification_request' | 'webhook' | 'blocklist_subscription' | 'blocklist_entry' | 'tag' | 'preview_card' | 'report' | 'email_domain_block' | 'canonical_email_block' | 'ip_block' | 'role' | 'async_refresh' | 'tag_name';

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  auth: Auth;
  /** One of these satisfies the route (empty: any). */
  scopes?: string[];
  pathParams?: Record<string, PathKind>;
  params?: Record<string, Kind>;
  /** Where params go: the query string (GET, DELETE) or a body (default for POST/PUT/PATCH). */
  in?: 'query' | 'body';
  /** Answers HTML rather than JSON errors (the OAuth pages). */
  html?: boolean;
  /** A user whose e-mail address is unconfirmed may use it (verify_credentials); elsewhere 403. */
  allowsUnconfirmed?: boolean;
  /** Answers 2xx for an id of no row (Mastodon dismisses an unknown suggestion silently). */
  unknownIdOk?: boolean;
  /** Answers Mastodon's 503 {"error": "Service Unavailable"} by design (translation with no backend): not a server error. */
  unavailable?: boolean;
  /** Served by the same handler as this method on the same path (PUT/PATCH): its params are swept there. */
  sameHandlerAs?: RouteSpec['method'];
}

const IP_BLOCK_PARAMS: Record<string, Kind> = { ip: 'string', severity: 'string', comment: 'text', expires_in: 'int' };
const PAGE: Record<string, Kind> = { max_id: 'id', since_id: 'id', min_id: 'id', limit: 'int' };
const ROLE_PARAMS: Record<string, Kind> = { name: 'string', color: 'string', position: 'int', permissions: 'string', highlighted: 'bool' };

const READ_ACCOUNTS = ['read', 'read:accounts'];
const WRITE_ACCOUNTS = ['write', 'write:accounts'];
const FOLLOWS = ['follow', 'write:follows'];
const ACCOUNT = { id: 'account' } as const;
const STATUS = { id: 'status' } as const;
const READ_STATUSES = ['read', 'read:statuses'];
const READ_NOTIFICATIONS = ['read', 'read:notifications'];
const WRITE_NOTIFICATIONS = ['write', 'write:notifications'];
const WRITE_MEDIA = ['write', 'write:media'];
const ATTACHMENT = { id: 'attachment' } as const;
const WRITE_STATUSES = ['write', 'write:statuses'];
const statusAction = (action: string, scopes: string[], params: Record<string, Kind> = {}): RouteSpec => ({
  method: 'POST',
  path: `/api/v1/statuses/:id/${action}`,
  auth: 'user',
  scopes,
  pathParams: STATUS,
  params,
});

const READ_FILTERS = ['read', 'read:filters'];
const WRITE_FILTERS = ['write', 'write:filters'];
const FILTER_PARAMS: Record<string, Kind> = { title: 'string', context: 'strings', filter_action: 'string', expires_in: 'int', keywords_attributes: 'fields' };
const KEYWORD_PARAMS: Record<string, Kind> = { keyword: 'string', whole_word: 'bool' };
const V1_FILTER_PARAMS: Record<string, Kind> = { phrase: 'string', context: 'strings', irreversible: 'bool', whole_word: 'bool', expires_in: 'int' };

const DOMAIN_BLOCK_PARAMS: Record<string, Kind> = {
  severity: 'string', reject_media: 'bool', reject_reports: 'bool', private_comment: 'text', public_comment: 'text', obfuscate: 'bool',
};

const relationship = (action: string, scopes: string[], params: Record<string, Kind> = {}): RouteSpec => ({
  method: 'POST',
  path: `/api/v1/accounts/:id/${action}`,
  auth: 'user',
  scopes,
  pathParams: ACCOUNT,
  params,
});

export const ROUTES: RouteSpec[] = [
  // Instance and discovery
  { method: 'GET', path: '/api/v1/instance', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/extended_description', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/privacy_policy', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/rules', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/peers', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/activity', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/languages', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/translation_languages', auth: 'public' },
  { method: 'GET', path: '/api/v1/instance/domain_blocks', auth: 'public' },
  {
    method: 'GET', path: '/api/v2/search', auth: 'public+scope', scopes: ['read', 'read:search'],
    params: { q: 'string', type: 'string', resolve: 'bool', following: 'bool', account_id: 'id', exclude_unreviewed: 'bool', max_id: 'id', min_id: 'id', limit: 'int', offset: 'int' },
  },
  { method: 'GET', path: '/api/v1/directory', auth: 'public+scope', scopes: READ_ACCOUNTS, params: { offset: 'int', limit: 'int', order: 'string', local: 'bool' } },
  { method: 'GET', path: '/health', auth: 'public' },
  { method: 'GET', path: '/metrics', auth: 'public' },
  { method: 'GET', path: '/avatars/original/missing.png', auth: 'public' },
  { method: 'GET', path: '/headers/original/missing.png', auth: 'public' },
  // The web pages (HTML for browsers) and the profile URL (the actor for ActivityPub clients).
  { method: 'GET', path: '/', auth: 'public', html: true },
  { method: 'GET', path: '/about', auth: 'public', html: true },
  { method: 'GET', path: '/privacy-policy', auth: 'public', html: true },
  // The public pages: a page for browsers, the ActivityPub object for peers (api/pages/routes.ts).
  { method: 'GET', path: '/@:username', auth: 'public', html: true, pathParams: { username: 'username' }, params: { max_id: 'id' }, in: 'query' },
  { method: 'GET', path: '/@:username/:id', auth: 'public', html: true, pathParams: { username: 'username', id: 'status' } },
  { method: 'GET', path: '/users/:username', auth: 'public', html: true, pathParams: { username: 'username' }, params: { max_id: 'id' }, in: 'query' },
  { method: 'GET', path: '/users/:username/statuses/:id', auth: 'public', html: true, pathParams: { username: 'username', id: 'status' } },
  { method: 'GET', path: '/tags/:name', auth: 'public', html: true, pathParams: { name: 'tag_name' }, params: { max_id: 'id' }, in: 'query' },
  { method: 'GET', path: '/api/oembed', auth: 'public', params: { url: 'url', maxwidth: 'int', maxheight: 'int' }, in: 'query' },
  { method: 'GET', path: '/assets/roost.css', auth: 'public' },
  { method: 'GET', path: '/api/v2/instance', auth: 'public' },
  { method: 'GET', path: '/.well-known/nodeinfo', auth: 'public' },
  { method: 'GET', path: '/nodeinfo/2.0', auth: 'public' },
  { method: 'GET', path: '/.well-known/host-meta', auth: 'public' },
  { method: 'GET', path: '/thumbnail.png', auth: 'public' },
  { method: 'GET', path: '/thumbnail@2x.png', auth: 'public' },
  { method: 'GET', path: '/system/*', auth: 'public', pathParams: { '*': 'media' } },

  // Apps and OAuth
  { method: 'POST', path: '/api/v1/apps', auth: 'public', params: { client_name: 'string', redirect_uris: 'url', scopes: 'scopes', website: 'url' } },
  { method: 'GET', path: '/api/v1/apps/verify_credentials', auth: 'token', scopes: [] },
  {
    method: 'GET',
    path: '/oauth/authorize',
    auth: 'public',
    html: true,
    in: 'query',
    params: { response_type: 'string', client_id: 'string', redirect_uri: 'url', scope: 'scopes', state: 'string', code_challenge: 'string', code_challenge_method: 'string' },
  },
  {
    method: 'POST',
    path: '/oauth/authorize',
    auth: 'public',
    html: true,
    params: {
      response_type: 'string', client_id: 'string', redirect_uri: 'url', scope: 'scopes', state: 'string', code_challenge: 'string',
      authenticity_token: 'string', decision: 'string', login: 'string', password: 'string',
    },
  },
  {
    method: 'POST',
    path: '/oauth/token',
    auth: 'client',
    params: { grant_type: 'string', client_id: 'string', client_secret: 'string', scope: 'scopes', code: 'string', redirect_uri: 'url', code_verifier: 'string', username: 'string', password: 'string' },
  },
  { method: 'POST', path: '/oauth/revoke', auth: 'client', params: { client_id: 'string', client_secret: 'string', token: 'string' } },
  { method: 'GET', path: '/.well-known/oauth-authorization-server', auth: 'public' },

  // Accounts
  {
    method: 'POST',
    path: '/api/v1/accounts',
    auth: 'app',
    scopes: WRITE_ACCOUNTS,
    params: { username: 'string', email: 'string', password: 'string', agreement: 'bool', locale: 'string', reason: 'text', date_of_birth: 'string' },
  },
  { method: 'GET', path: '/api/v1/accounts', auth: 'public+scope', scopes: READ_ACCOUNTS, params: { id: 'ids' } },
  // E-mail confirmation and the password web flow
  { method: 'POST', path: '/api/v1/emails/confirmations', auth: 'token', scopes: WRITE_ACCOUNTS, params: { email: 'string' } },
  { method: 'GET', path: '/api/v1/emails/check_confirmation', auth: 'user', scopes: READ_ACCOUNTS, allowsUnconfirmed: true },
  { method: 'GET', path: '/auth/confirmation', auth: 'public', html: true, params: { confirmation_token: 'string' } },
  { method: 'GET', path: '/auth/password/new', auth: 'public', html: true },
  { method: 'POST', path: '/auth/password', auth: 'public', html: true, params: { email: 'string' } },
  { method: 'GET', path: '/auth/password/edit', auth: 'public', html: true, params: { reset_password_token: 'string' } },
  { method: 'POST', path: '/auth/password/edit', auth: 'public', html: true, params: { reset_password_token: 'string', password: 'string', password_confirmation: 'string' } },
  { method: 'GET', path: '/api/v1/accounts/verify_credentials', auth: 'user', scopes: [...READ_ACCOUNTS, 'profile'], allowsUnconfirmed: true },
  ...(['PATCH', 'PUT'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PUT' ? 'PATCH' : undefined,
      path: '/api/v1/accounts/update_credentials',
      auth: 'user',
      scopes: WRITE_ACCOUNTS,
      params: {
        display_name: 'string', note: 'text', locked: 'bool', bot: 'bool', discoverable: 'bool', indexable: 'bool', hide_collections: 'bool',
        fields_attributes: 'fields', source: 'hash', avatar: 'file', header: 'file',
      },
    }),
  ),
  { method: 'GET', path: '/api/v1/accounts/lookup', auth: 'public+scope', scopes: READ_ACCOUNTS, params: { acct: 'string' } },
  { method: 'GET', path: '/api/v1/accounts/search', auth: 'user', scopes: READ_ACCOUNTS, params: { q: 'string', limit: 'int', offset: 'int', following: 'bool', resolve: 'bool' } },
  { method: 'GET', path: '/api/v1/accounts/:id', auth: 'public+scope', scopes: READ_ACCOUNTS, pathParams: ACCOUNT },
  { method: 'GET', path: '/api/v1/accounts/relationships', auth: 'user', scopes: ['read', 'read:follows'], params: { id: 'ids', with_suspended: 'bool' } },
  { method: 'GET', path: '/api/v1/accounts/familiar_followers', auth: 'user', scopes: ['read', 'read:follows'], params: { id: 'ids' } },
  { method: 'GET', path: '/api/v1/accounts/:id/followers', auth: 'public+scope', scopes: READ_ACCOUNTS, pathParams: ACCOUNT, params: PAGE },
  { method: 'GET', path: '/api/v1/accounts/:id/following', auth: 'public+scope', scopes: READ_ACCOUNTS, pathParams: ACCOUNT, params: PAGE },
  { method: 'GET', path: '/api/v1/accounts/:id/statuses', auth: 'public+scope', scopes: READ_STATUSES, pathParams: ACCOUNT, params: { ...PAGE, pinned: 'bool', only_media: 'bool', exclude_replies: 'bool', exclude_reblogs: 'bool', tagged: 'string' } },

  // Statuses
  {
    method: 'POST',
    path: '/api/v1/statuses',
    auth: 'user',
    scopes: WRITE_STATUSES,
    params: {
      status: 'text', spoiler_text: 'text', sensitive: 'bool', visibility: 'string', language: 'string', in_reply_to_id: 'id', media_ids: 'ids', poll: 'hash', scheduled_at: 'string',
      quoted_status_id: 'id', quote_approval_policy: 'string',
    },
  },
  { method: 'GET', path: '/api/v1/statuses', auth: 'public+scope', scopes: READ_STATUSES, params: { id: 'ids' } },
  { method: 'GET', path: '/api/v1/statuses/:id', auth: 'public+scope', scopes: READ_STATUSES, pathParams: STATUS },
  { method: 'DELETE', path: '/api/v1/statuses/:id', auth: 'user', scopes: WRITE_STATUSES, pathParams: STATUS, params: { delete_media: 'bool' } },
  {
    method: 'PUT',
    path: '/api/v1/statuses/:id',
    auth: 'user',
    scopes: WRITE_STATUSES,
    pathParams: STATUS,
    params: { status: 'text', spoiler_text: 'text', sensitive: 'bool', language: 'string', media_ids: 'ids', media_attributes: 'fields', poll: 'hash', quote_approval_policy: 'string' },
  },
  { method: 'GET', path: '/api/v1/statuses/:id/history', auth: 'public+scope', scopes: READ_STATUSES, pathParams: STATUS },
  { method: 'GET', path: '/api/v1/timelines/home', auth: 'user', scopes: READ_STATUSES, params: PAGE },
  { method: 'GET', path: '/api/v1/timelines/public', auth: 'public+scope', scopes: READ_STATUSES, params: { ...PAGE, local: 'bool', remote: 'bool', only_media: 'bool' } },
  {
    method: 'GET',
    path: '/api/v1/timelines/tag/:hashtag',
    auth: 'public+scope',
    scopes: READ_STATUSES,
    // Any string names a hashtag: an unknown one (or one no hashtag can be) has an empty timeline, as Mastodon's.
    pathParams: { hashtag: 'username' },
    unknownIdOk: true,
    params: { ...PAGE, local: 'bool', remote: 'bool', only_media: 'bool', any: 'strings', all: 'strings', none: 'strings' },
  },
  { method: 'GET', path: '/api/v1/statuses/:id/context', auth: 'public+scope', scopes: READ_STATUSES, pathParams: STATUS },
  { method: 'GET', path: '/api/v1_alpha/async_refreshes/:id', auth: 'user', scopes: ['read'], pathParams: { id: 'async_refresh' } },
  { method: 'GET', path: '/api/v1/statuses/:id/source', auth: 'user', scopes: READ_STATUSES, pathParams: STATUS },
  { method: 'GET', path: '/api/v1/statuses/:id/favourited_by', auth: 'public+scope', scopes: READ_STATUSES, pathParams: STATUS, params: PAGE },
  { method: 'GET', path: '/api/v1/statuses/:id/reblogged_by', auth: 'public+scope', scopes: READ_STATUSES, pathParams: STATUS, params: PAGE },
  { method: 'GET', path: '/api/v1/statuses/:id/quotes', auth: 'user', scopes: READ_STATUSES, pathParams: STATUS, params: PAGE },
  { method: 'POST', path: '/api/v1/statuses/:id/quotes/:quoting_status_id/revoke', auth: 'user', scopes: WRITE_STATUSES, pathParams: { id: 'status', quoting_status_id: 'status' } },
  { method: 'PUT', path: '/api/v1/statuses/:id/interaction_policy', auth: 'user', scopes: WRITE_STATUSES, pathParams: STATUS, params: { quote_approval_policy: 'string' } },

  // Media attachments (DELETE last: it removes the fixture's attachment)
  { method: 'POST', path: '/api/v1/media', auth: 'user', scopes: WRITE_MEDIA, params: { file: 'file', description: 'text', focus: 'string' } },
  { method: 'POST', path: '/api/v2/media', auth: 'user', scopes: WRITE_MEDIA, params: { file: 'file', description: 'text', focus: 'string' } },
  { method: 'GET', path: '/api/v1/media/:id', auth: 'user', scopes: WRITE_MEDIA, pathParams: ATTACHMENT },
  { method: 'PUT', path: '/api/v1/media/:id', auth: 'user', scopes: WRITE_MEDIA, pathParams: ATTACHMENT, params: { description: 'text', focus: 'string' } },
  { method: 'DELETE', path: '/api/v1/media/:id', auth: 'user', scopes: WRITE_MEDIA, pathParams: ATTACHMENT },
  // Scheduled statuses (DELETE last: it cancels the fixture's scheduled status)
  { method: 'GET', path: '/api/v1/scheduled_statuses', auth: 'user', scopes: READ_STATUSES, params: PAGE },
  { method: 'GET', path: '/api/v1/scheduled_statuses/:id', auth: 'user', scopes: READ_STATUSES, pathParams: { id: 'scheduled_status' } },
  { method: 'PUT', path: '/api/v1/scheduled_statuses/:id', auth: 'user', scopes: WRITE_STATUSES, pathParams: { id: 'scheduled_status' }, params: { scheduled_at: 'string' } },
  { method: 'DELETE', path: '/api/v1/scheduled_statuses/:id', auth: 'user', scopes: WRITE_STATUSES, pathParams: { id: 'scheduled_status' } },
  // Polls
  { method: 'GET', path: '/api/v1/polls/:id', auth: 'public+scope', scopes: READ_STATUSES, pathParams: { id: 'poll' } },
  { method: 'POST', path: '/api/v1/polls/:id/votes', auth: 'user', scopes: WRITE_STATUSES, pathParams: { id: 'poll' }, params: { choices: 'ids' } },
  statusAction('favourite', ['write', 'write:favourites']),
  statusAction('unfavourite', ['write', 'write:favourites']),
  statusAction('reblog', WRITE_STATUSES, { visibility: 'string' }),
  statusAction('unreblog', WRITE_STATUSES),
  statusAction('bookmark', ['write', 'write:bookmarks']),
  statusAction('unbookmark', ['write', 'write:bookmarks']),
  statusAction('pin', ['write', 'write:accounts']),
  statusAction('unpin', ['write', 'write:accounts']),
  statusAction('mute', ['write', 'write:mutes']),
  statusAction('unmute', ['write', 'write:mutes']),
  { ...statusAction('translate', READ_STATUSES, { lang: 'string' }), unavailable: true },
  { method: 'GET', path: '/api/v1/accounts/:id/identity_proofs', auth: 'public', pathParams: ACCOUNT },
  relationship('follow', FOLLOWS, { reblogs: 'bool', notify: 'bool', languages: 'strings' }),
  relationship('unfollow', FOLLOWS),
  relationship('remove_from_followers', FOLLOWS),
  relationship('mute', ['follow', 'write:mutes'], { notifications: 'bool', duration: 'int' }),
  relationship('unmute', ['follow', 'write:mutes']),
  relationship('block', ['follow', 'write:blocks']),
  relationship('unblock', ['follow', 'write:blocks']),
  relationship('note', WRITE_ACCOUNTS, { comment: 'text' }),
  relationship('pin', WRITE_ACCOUNTS),
  relationship('unpin', WRITE_ACCOUNTS),
  relationship('endorse', WRITE_ACCOUNTS),
  relationship('unendorse', WRITE_ACCOUNTS),
  { method: 'GET', path: '/api/v1/accounts/:id/endorsements', auth: 'public+scope', scopes: READ_ACCOUNTS, pathParams: ACCOUNT, params: PAGE },
  { method: 'DELETE', path: '/api/v1/profile/avatar', auth: 'user', scopes: WRITE_ACCOUNTS },
  { method: 'DELETE', path: '/api/v1/profile/header', auth: 'user', scopes: WRITE_ACCOUNTS },
  { method: 'GET', path: '/api/v1/preferences', auth: 'user', scopes: READ_ACCOUNTS },

  // The viewer's lists
  { method: 'GET', path: '/api/v1/follow_requests', auth: 'user', scopes: ['follow', 'read:follows'], params: PAGE },
  { method: 'POST', path: '/api/v1/follow_requests/:id/authorize', auth: 'user', scopes: FOLLOWS, pathParams: { id: 'follow_request' } },
  { method: 'POST', path: '/api/v1/follow_requests/:id/reject', auth: 'user', scopes: FOLLOWS, pathParams: { id: 'follow_request' } },
  { method: 'GET', path: '/api/v1/blocks', auth: 'user', scopes: ['follow', 'read:blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/mutes', auth: 'user', scopes: ['follow', 'read:mutes'], params: PAGE },
  { method: 'GET', path: '/api/v1/endorsements', auth: 'user', scopes: READ_ACCOUNTS, params: PAGE },
  { method: 'GET', path: '/api/v1/domain_blocks', auth: 'user', scopes: ['follow', 'read:blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/bookmarks', auth: 'user', scopes: ['read', 'read:bookmarks'], params: PAGE },
  { method: 'GET', path: '/api/v1/favourites', auth: 'user', scopes: ['read', 'read:favourites'], params: PAGE },
  // Direct-message conversations (DELETE last: it removes the fixture's conversation)
  { method: 'GET', path: '/api/v1/conversations', auth: 'user', scopes: READ_STATUSES, params: PAGE },
  { method: 'POST', path: '/api/v1/conversations/:id/read', auth: 'user', scopes: ['write', 'write:conversations'], pathParams: { id: 'conversation' } },
  { method: 'POST', path: '/api/v1/conversations/:id/unread', auth: 'user', scopes: ['write', 'write:conversations'], pathParams: { id: 'conversation' } },
  { method: 'DELETE', path: '/api/v1/conversations/:id', auth: 'user', scopes: ['write', 'write:conversations'], pathParams: { id: 'conversation' } },
  { method: 'POST', path: '/api/v1/domain_blocks', auth: 'user', scopes: ['follow', 'write:blocks'], params: { domain: 'domain' } },
  { method: 'DELETE', path: '/api/v1/domain_blocks', auth: 'user', scopes: ['follow', 'write:blocks'], params: { domain: 'domain' } },

  // Admin: the domain policy
  { method: 'GET', path: '/api/v1/admin/domain_blocks', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/domain_blocks/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'], pathParams: { id: 'domain_block' } },
  { method: 'POST', path: '/api/v1/admin/domain_blocks', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], params: { domain: 'domain', ...DOMAIN_BLOCK_PARAMS } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/domain_blocks/:id',
      auth: 'admin',
      scopes: ['admin:write', 'admin:write:domain_blocks'],
      pathParams: { id: 'domain_block' },
      params: DOMAIN_BLOCK_PARAMS,
    }),
  ),
  { method: 'DELETE', path: '/api/v1/admin/domain_blocks/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], pathParams: { id: 'domain_block' } },
  { method: 'GET', path: '/api/v1/admin/domain_allows', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_allows'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/domain_allows/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_allows'], pathParams: { id: 'domain_allow' } },
  { method: 'POST', path: '/api/v1/admin/domain_allows', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_allows'], params: { domain: 'domain' } },
  { method: 'DELETE', path: '/api/v1/admin/domain_allows/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_allows'], pathParams: { id: 'domain_allow' } },

  // Admin: reports and the audit log
  { method: 'GET', path: '/api/v1/admin/reports', auth: 'admin', scopes: ['admin:read', 'admin:read:reports'], params: { ...PAGE, resolved: 'bool', account_id: 'id', target_account_id: 'id' } },
  { method: 'GET', path: '/api/v1/admin/reports/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:reports'], pathParams: { id: 'report' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/reports/:id',
      auth: 'admin',
      scopes: ['admin:write', 'admin:write:reports'],
      pathParams: { id: 'report' },
      params: { category: 'string', rule_ids: 'ids' },
    }),
  ),
  ...(['assign_to_self', 'unassign', 'resolve', 'reopen'] as const).map(
    (action): RouteSpec => ({ method: 'POST', path: `/api/v1/admin/reports/:id/${action}`, auth: 'admin', scopes: ['admin:write', 'admin:write:reports'], pathParams: { id: 'report' } }),
  ),
  { method: 'GET', path: '/api/v1/admin/action_logs', auth: 'admin', scopes: ['admin:read'], params: { ...PAGE, account_id: 'id', target_type: 'string', target_id: 'string' } },

  // Admin: the sign-up blocks (DELETEs last in each group: they remove the fixture)
  { method: 'GET', path: '/api/v1/admin/email_domain_blocks', auth: 'admin', scopes: ['admin:read', 'admin:read:email_domain_blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/email_domain_blocks/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:email_domain_blocks'], pathParams: { id: 'email_domain_block' } },
  { method: 'POST', path: '/api/v1/admin/email_domain_blocks', auth: 'admin', scopes: ['admin:write', 'admin:write:email_domain_blocks'], params: { domain: 'domain' } },
  { method: 'DELETE', path: '/api/v1/admin/email_domain_blocks/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:email_domain_blocks'], pathParams: { id: 'email_domain_block' } },
  { method: 'GET', path: '/api/v1/admin/canonical_email_blocks', auth: 'admin', scopes: ['admin:read', 'admin:read:canonical_email_blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/canonical_email_blocks/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:canonical_email_blocks'], pathParams: { id: 'canonical_email_block' } },
  { method: 'POST', path: '/api/v1/admin/canonical_email_blocks/test', auth: 'admin', scopes: ['admin:read', 'admin:read:canonical_email_blocks'], params: { email: 'string' } },
  { method: 'POST', path: '/api/v1/admin/canonical_email_blocks', auth: 'admin', scopes: ['admin:write', 'admin:write:canonical_email_blocks'], params: { email: 'string', canonical_email_hash: 'string' } },
  { method: 'DELETE', path: '/api/v1/admin/canonical_email_blocks/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:canonical_email_blocks'], pathParams: { id: 'canonical_email_block' } },
  { method: 'GET', path: '/api/v1/admin/ip_blocks', auth: 'admin', scopes: ['admin:read', 'admin:read:ip_blocks'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/ip_blocks/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:ip_blocks'], pathParams: { id: 'ip_block' } },
  { method: 'POST', path: '/api/v1/admin/ip_blocks', auth: 'admin', scopes: ['admin:write', 'admin:write:ip_blocks'], params: IP_BLOCK_PARAMS },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/ip_blocks/:id',
      auth: 'admin',
      scopes: ['admin:write', 'admin:write:ip_blocks'],
      pathParams: { id: 'ip_block' },
      params: IP_BLOCK_PARAMS,
    }),
  ),
  { method: 'DELETE', path: '/api/v1/admin/ip_blocks/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:ip_blocks'], pathParams: { id: 'ip_block' } },

  // Lists (DELETE of the list last: it removes the fixture's list) and markers
  { method: 'GET', path: '/api/v1/lists', auth: 'user', scopes: ['read', 'read:lists'] },
  { method: 'POST', path: '/api/v1/lists', auth: 'user', scopes: ['write', 'write:lists'], params: { title: 'string', replies_policy: 'string', exclusive: 'bool' } },
  { method: 'GET', path: '/api/v1/lists/:id', auth: 'user', scopes: ['read', 'read:lists'], pathParams: { id: 'list' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/lists/:id',
      auth: 'user',
      scopes: ['write', 'write:lists'],
      pathParams: { id: 'list' },
      params: { title: 'string', replies_policy: 'string', exclusive: 'bool' },
    }),
  ),
  { method: 'GET', path: '/api/v1/lists/:id/accounts', auth: 'user', scopes: ['read', 'read:lists'], pathParams: { id: 'list' }, params: PAGE },
  { method: 'POST', path: '/api/v1/lists/:id/accounts', auth: 'user', scopes: ['write', 'write:lists'], pathParams: { id: 'list' }, params: { account_ids: 'ids' } },
  { method: 'DELETE', path: '/api/v1/lists/:id/accounts', auth: 'user', scopes: ['write', 'write:lists'], pathParams: { id: 'list' }, params: { account_ids: 'ids' } },
  { method: 'GET', path: '/api/v1/accounts/:id/lists', auth: 'user', scopes: ['read', 'read:lists'], pathParams: ACCOUNT },
  { method: 'GET', path: '/api/v1/timelines/list/:list_id', auth: 'user', scopes: ['read', 'read:lists'], pathParams: { list_id: 'list' }, params: PAGE },
  { method: 'DELETE', path: '/api/v1/lists/:id', auth: 'user', scopes: ['write', 'write:lists'], pathParams: { id: 'list' } },
  { method: 'GET', path: '/api/v1/markers', auth: 'user', scopes: READ_STATUSES, params: { timeline: 'strings' } },

  // Filters, v2 and v1 (the fixture's keyword doubles as its v1 filter; the DELETEs come last)
  { method: 'GET', path: '/api/v2/filters', auth: 'user', scopes: READ_FILTERS },
  { method: 'POST', path: '/api/v2/filters', auth: 'user', scopes: WRITE_FILTERS, params: FILTER_PARAMS },
  { method: 'GET', path: '/api/v2/filters/:id', auth: 'user', scopes: READ_FILTERS, pathParams: { id: 'filter' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v2/filters/:id',
      auth: 'user',
      scopes: WRITE_FILTERS,
      pathParams: { id: 'filter' },
      params: FILTER_PARAMS,
    }),
  ),
  { method: 'GET', path: '/api/v2/filters/:filter_id/keywords', auth: 'user', scopes: READ_FILTERS, pathParams: { filter_id: 'filter' } },
  { method: 'POST', path: '/api/v2/filters/:filter_id/keywords', auth: 'user', scopes: WRITE_FILTERS, pathParams: { filter_id: 'filter' }, params: KEYWORD_PARAMS },
  { method: 'POST', path: '/api/v2/filters/:filter_id/keywords/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { filter_id: 'filter', id: 'filter_keyword' }, params: KEYWORD_PARAMS },
  ...(['/api/v2/filters/keywords/:id', '/api/v1/filters/keywords/:id'] as const).flatMap((path): RouteSpec[] => [
    { method: 'GET', path, auth: 'user', scopes: READ_FILTERS, pathParams: { id: 'filter_keyword' } },
    { method: 'PUT', path, auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_keyword' }, params: KEYWORD_PARAMS },
    { method: 'PATCH', sameHandlerAs: 'PUT', path, auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_keyword' }, params: KEYWORD_PARAMS },
  ]),
  { method: 'GET', path: '/api/v2/filters/:filter_id/statuses', auth: 'user', scopes: READ_FILTERS, pathParams: { filter_id: 'filter' } },
  { method: 'POST', path: '/api/v2/filters/:filter_id/statuses', auth: 'user', scopes: WRITE_FILTERS, pathParams: { filter_id: 'filter' }, params: { status_id: 'id' } },
  { method: 'GET', path: '/api/v2/filters/statuses/:id', auth: 'user', scopes: READ_FILTERS, pathParams: { id: 'filter_status' } },
  { method: 'GET', path: '/api/v1/filters', auth: 'user', scopes: READ_FILTERS },
  { method: 'POST', path: '/api/v1/filters', auth: 'user', scopes: WRITE_FILTERS, params: V1_FILTER_PARAMS },
  { method: 'GET', path: '/api/v1/filters/:id', auth: 'user', scopes: READ_FILTERS, pathParams: { id: 'filter_keyword' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/filters/:id',
      auth: 'user',
      scopes: WRITE_FILTERS,
      pathParams: { id: 'filter_keyword' },
      params: V1_FILTER_PARAMS,
    }),
  ),
  { method: 'DELETE', path: '/api/v2/filters/statuses/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_status' } },
  { method: 'DELETE', path: '/api/v2/filters/keywords/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_keyword' } },
  { method: 'DELETE', path: '/api/v1/filters/keywords/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_keyword' } },
  { method: 'DELETE', path: '/api/v1/filters/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter_keyword' } },
  { method: 'DELETE', path: '/api/v2/filters/:id', auth: 'user', scopes: WRITE_FILTERS, pathParams: { id: 'filter' } },
  { method: 'POST', path: '/api/v1/markers', auth: 'user', scopes: WRITE_STATUSES, params: { home: 'hash', notifications: 'hash' } },

  // Web Push: one subscription per token (GET and PUT answer 404 without one)
  { method: 'POST', path: '/api/v1/push/subscription', auth: 'user', scopes: ['push'], params: { subscription: 'hash', data: 'hash' } },
  { method: 'GET', path: '/api/v1/push/subscription', auth: 'user', scopes: ['push'] },
  { method: 'PUT', path: '/api/v1/push/subscription', auth: 'user', scopes: ['push'], params: { data: 'hash', policy: 'string' } },
  { method: 'DELETE', path: '/api/v1/push/subscription', auth: 'user', scopes: ['push'] },

  // Notifications (v1, v2 grouped) and reports; the dismissals and clear last: they remove the fixture's notifications
  { method: 'GET', path: '/api/v1/notifications', auth: 'user', scopes: READ_NOTIFICATIONS, params: { ...PAGE, types: 'strings', exclude_types: 'strings', account_id: 'id', include_filtered: 'bool' } },
  { method: 'GET', path: '/api/v1/notifications/unread_count', auth: 'user', scopes: READ_NOTIFICATIONS, params: { limit: 'int', types: 'strings', exclude_types: 'strings', account_id: 'id' } },
  { method: 'GET', path: '/api/v1/notifications/:id', auth: 'user', scopes: READ_NOTIFICATIONS, pathParams: { id: 'notification' } },
  { method: 'GET', path: '/api/v2/notifications', auth: 'user', scopes: READ_NOTIFICATIONS, params: { ...PAGE, types: 'strings', exclude_types: 'strings', account_id: 'id', grouped_types: 'strings', expand_accounts: 'string', include_filtered: 'bool' } },
  { method: 'GET', path: '/api/v2/notifications/unread_count', auth: 'user', scopes: READ_NOTIFICATIONS, params: { limit: 'int', types: 'strings', exclude_types: 'strings', account_id: 'id', grouped_types: 'strings' } },
  { method: 'GET', path: '/api/v2/notifications/:group_key', auth: 'user', scopes: READ_NOTIFICATIONS, pathParams: { group_key: 'notification_group' } },
  { method: 'GET', path: '/api/v2/notifications/:group_key/accounts', auth: 'user', scopes: READ_NOTIFICATIONS, pathParams: { group_key: 'notification_group' } },
  // The notification policy and requests (4.3); accepting and dismissing the fixture's request last of them
  { method: 'GET', path: '/api/v2/notifications/policy', auth: 'user', scopes: READ_NOTIFICATIONS },
  { method: 'PATCH', path: '/api/v2/notifications/policy', auth: 'user', scopes: WRITE_NOTIFICATIONS, params: { for_not_following: 'string', for_not_followers: 'string', for_new_accounts: 'string', for_private_mentions: 'string', for_limited_accounts: 'string' } },
  { method: 'GET', path: '/api/v1/notifications/policy', auth: 'user', scopes: READ_NOTIFICATIONS },
  { method: 'PUT', path: '/api/v1/notifications/policy', auth: 'user', scopes: WRITE_NOTIFICATIONS, params: { filter_not_following: 'bool', filter_not_followers: 'bool', filter_new_accounts: 'bool', filter_private_mentions: 'bool' } },
  { method: 'PATCH', path: '/api/v1/notifications/policy', auth: 'user', scopes: WRITE_NOTIFICATIONS, sameHandlerAs: 'PUT' },
  { method: 'GET', path: '/api/v1/notifications/requests', auth: 'user', scopes: READ_NOTIFICATIONS, params: PAGE },
  { method: 'GET', path: '/api/v1/notifications/requests/merged', auth: 'user', scopes: READ_NOTIFICATIONS },
  { method: 'GET', path: '/api/v1/notifications/requests/:id', auth: 'user', scopes: READ_NOTIFICATIONS, pathParams: { id: 'notification_request' } },
  { method: 'POST', path: '/api/v1/notifications/requests/accept', auth: 'user', scopes: WRITE_NOTIFICATIONS, params: { id: 'ids' } },
  { method: 'POST', path: '/api/v1/notifications/requests/dismiss', auth: 'user', scopes: WRITE_NOTIFICATIONS, params: { id: 'ids' } },
  { method: 'POST', path: '/api/v1/notifications/requests/:id/dismiss', auth: 'user', scopes: WRITE_NOTIFICATIONS, pathParams: { id: 'notification_request' } },
  { method: 'POST', path: '/api/v1/notifications/requests/:id/accept', auth: 'user', scopes: WRITE_NOTIFICATIONS, pathParams: { id: 'notification_request' } },
  { method: 'POST', path: '/api/v1/reports', auth: 'user', scopes: ['write', 'write:reports'], params: { account_id: 'id', status_ids: 'ids', comment: 'text', forward: 'bool', category: 'string', rule_ids: 'strings' } },
  { method: 'POST', path: '/api/v2/notifications/:group_key/dismiss', auth: 'user', scopes: WRITE_NOTIFICATIONS, pathParams: { group_key: 'notification_group' }, unknownIdOk: true },
  { method: 'POST', path: '/api/v1/notifications/:id/dismiss', auth: 'user', scopes: WRITE_NOTIFICATIONS, pathParams: { id: 'notification' } },
  { method: 'POST', path: '/api/v1/notifications/clear', auth: 'user', scopes: WRITE_NOTIFICATIONS },

  // Custom emojis, featured and followed tags (a tag name: any string; an invalid one is a 404)
  { method: 'GET', path: '/api/v1/custom_emojis', auth: 'public' },
  { method: 'GET', path: '/api/v1/trends', auth: 'public+scope', scopes: ['read', 'read:statuses'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/trends/tags', auth: 'public+scope', scopes: ['read', 'read:statuses'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/trends/statuses', auth: 'public+scope', scopes: ['read', 'read:statuses'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/trends/links', auth: 'public+scope', scopes: ['read', 'read:statuses'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/admin/trends/tags', auth: 'admin', scopes: ['admin:read'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/admin/trends/statuses', auth: 'admin', scopes: ['admin:read'], params: { limit: 'int', offset: 'int' } },
  { method: 'GET', path: '/api/v1/admin/trends/links', auth: 'admin', scopes: ['admin:read'], params: { limit: 'int', offset: 'int' } },
  { method: 'POST', path: '/api/v1/admin/trends/tags/:id/approve', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'tag' } },
  { method: 'POST', path: '/api/v1/admin/trends/tags/:id/reject', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'tag' } },
  { method: 'POST', path: '/api/v1/admin/trends/statuses/:id/approve', auth: 'admin', scopes: ['admin:write'], pathParams: STATUS },
  { method: 'POST', path: '/api/v1/admin/trends/statuses/:id/reject', auth: 'admin', scopes: ['admin:write'], pathParams: STATUS },
  { method: 'POST', path: '/api/v1/admin/trends/links/:id/approve', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'preview_card' } },
  { method: 'POST', path: '/api/v1/admin/trends/links/:id/reject', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'preview_card' } },
  { method: 'GET', path: '/api/v1/tags/:name', auth: 'public+scope', scopes: ['read', 'read:follows'], pathParams: { name: 'username' }, unknownIdOk: true },
  { method: 'POST', path: '/api/v1/tags/:name/follow', auth: 'user', scopes: ['follow', 'write', 'write:follows'], pathParams: { name: 'username' }, unknownIdOk: true },
  { method: 'POST', path: '/api/v1/tags/:name/unfollow', auth: 'user', scopes: ['follow', 'write', 'write:follows'], pathParams: { name: 'username' }, unknownIdOk: true },
  { method: 'POST', path: '/api/v1/tags/:name/feature', auth: 'user', scopes: WRITE_ACCOUNTS, pathParams: { name: 'username' }, unknownIdOk: true },
  { method: 'POST', path: '/api/v1/tags/:name/unfeature', auth: 'user', scopes: WRITE_ACCOUNTS, pathParams: { name: 'username' }, unknownIdOk: true },
  { method: 'GET', path: '/api/v1/followed_tags', auth: 'user', scopes: ['read', 'read:follows'], params: PAGE },
  { method: 'GET', path: '/api/v1/featured_tags', auth: 'user', scopes: READ_ACCOUNTS },
  { method: 'POST', path: '/api/v1/featured_tags', auth: 'user', scopes: WRITE_ACCOUNTS, params: { name: 'string' } },
  { method: 'GET', path: '/api/v1/featured_tags/suggestions', auth: 'user', scopes: READ_ACCOUNTS },
  { method: 'DELETE', path: '/api/v1/featured_tags/:id', auth: 'user', scopes: WRITE_ACCOUNTS, pathParams: { id: 'featured_tag' } },
  { method: 'GET', path: '/api/v1/accounts/:id/featured_tags', auth: 'public+scope', scopes: READ_ACCOUNTS, pathParams: ACCOUNT },

  // Admin: custom emojis (DELETE last: it removes the fixture's emoji)
  { method: 'GET', path: '/api/v1/admin/custom_emojis', auth: 'admin', scopes: ['admin:read'], params: PAGE },
  { method: 'GET', path: '/api/v1/admin/custom_emojis/:id', auth: 'admin', scopes: ['admin:read'], pathParams: { id: 'custom_emoji' } },
  { method: 'POST', path: '/api/v1/admin/custom_emojis', auth: 'admin', scopes: ['admin:write'], params: { shortcode: 'string', image: 'file', category: 'string', visible_in_picker: 'bool' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/custom_emojis/:id',
      auth: 'admin',
      scopes: ['admin:write'],
      pathParams: { id: 'custom_emoji' },
      params: { category: 'string', category_id: 'id', visible_in_picker: 'bool', disabled: 'bool' },
    }),
  ),
  { method: 'DELETE', path: '/api/v1/admin/custom_emojis/:id', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'custom_emoji' } },

  // Admin webhooks (and the failures route, a Roost extension)
  { method: 'GET', path: '/api/v1/admin/webhooks', auth: 'admin', scopes: ['admin:read'] },
  { method: 'GET', path: '/api/v1/admin/webhooks/:id', auth: 'admin', scopes: ['admin:read'], pathParams: { id: 'webhook' } },
  { method: 'GET', path: '/api/v1/admin/webhooks/:id/failures', auth: 'admin', scopes: ['admin:read'], pathParams: { id: 'webhook' }, params: { limit: 'int' } },
  { method: 'POST', path: '/api/v1/admin/webhooks', auth: 'admin', scopes: ['admin:write'], params: { url: 'url', events: 'strings' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/webhooks/:id',
      auth: 'admin',
      scopes: ['admin:write'],
      pathParams: { id: 'webhook' },
      params: { url: 'url', events: 'strings' },
    }),
  ),
  { method: 'POST', path: '/api/v1/admin/webhooks/:id/enable', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'webhook' } },
  { method: 'POST', path: '/api/v1/admin/webhooks/:id/disable', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'webhook' } },
  { method: 'POST', path: '/api/v1/admin/webhooks/:id/rotate_secret', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'webhook' } },
  { method: 'DELETE', path: '/api/v1/admin/webhooks/:id', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'webhook' } },

  // Blocklist subscriptions (a Roost extension) and the export of the domain blocks
  { method: 'GET', path: '/api/v1/admin/domain_blocks/export', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'] },
  { method: 'GET', path: '/api/v1/admin/blocklist_subscriptions', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'] },
  { method: 'POST', path: '/api/v1/admin/blocklist_subscriptions', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], params: { url: 'url', auto_apply: 'bool' } },
  { method: 'GET', path: '/api/v1/admin/blocklist_subscriptions/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'], pathParams: { id: 'blocklist_subscription' } },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/blocklist_subscriptions/:id',
      auth: 'admin',
      scopes: ['admin:write', 'admin:write:domain_blocks'],
      pathParams: { id: 'blocklist_subscription' },
      params: { url: 'url', auto_apply: 'bool' },
    }),
  ),
  { method: 'DELETE', path: '/api/v1/admin/blocklist_subscriptions/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], pathParams: { id: 'blocklist_subscription' }, params: { retract: 'bool' } },
  { method: 'POST', path: '/api/v1/admin/blocklist_subscriptions/:id/refresh', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], pathParams: { id: 'blocklist_subscription' } },
  { method: 'GET', path: '/api/v1/admin/blocklist_entries', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'], params: { ...PAGE, state: 'string', subscription_id: 'id' } },
  { method: 'GET', path: '/api/v1/admin/blocklist_entries/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:domain_blocks'], pathParams: { id: 'blocklist_entry' } },
  { method: 'POST', path: '/api/v1/admin/blocklist_entries/:id/approve', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], pathParams: { id: 'blocklist_entry' } },
  { method: 'POST', path: '/api/v1/admin/blocklist_entries/:id/reject', auth: 'admin', scopes: ['admin:write', 'admin:write:domain_blocks'], pathParams: { id: 'blocklist_entry' } },

  // The admin dashboard's figures
  { method: 'POST', path: '/api/v1/admin/measures', auth: 'admin', scopes: ['admin:read'], params: { keys: 'strings', start_at: 'string', end_at: 'string', tag_uses: 'hash', instance_statuses: 'hash' } },
  { method: 'POST', path: '/api/v1/admin/dimensions', auth: 'admin', scopes: ['admin:read'], params: { keys: 'strings', start_at: 'string', end_at: 'string', limit: 'int', tag_servers: 'hash' } },
  { method: 'POST', path: '/api/v1/admin/retention', auth: 'admin', scopes: ['admin:read'], params: { start_at: 'string', end_at: 'string', frequency: 'string' } },

  // Admin: accounts (Mastodon's v1 and v2) and roles (a Roost extension)
  {
    method: 'GET',
    path: '/api/v1/admin/accounts',
    auth: 'admin',
    scopes: ['admin:read', 'admin:read:accounts'],
    params: { ...PAGE, local: 'bool', remote: 'bool', active: 'bool', pending: 'bool', disabled: 'bool', silenced: 'bool', suspended: 'bool', sensitized: 'bool', staff: 'bool', username: 'string', display_name: 'string', by_domain: 'domain', email: 'string', ip: 'string' },
  },
  {
    method: 'GET',
    path: '/api/v2/admin/accounts',
    auth: 'admin',
    scopes: ['admin:read', 'admin:read:accounts'],
    params: { ...PAGE, origin: 'string', status: 'string', permissions: 'string', role_ids: 'ids', invited_by: 'id', username: 'string', display_name: 'string', by_domain: 'domain', email: 'string', ip: 'string' },
  },
  { method: 'GET', path: '/api/v1/admin/accounts/:id', auth: 'admin', scopes: ['admin:read', 'admin:read:accounts'], pathParams: { id: 'account' } },
  { method: 'DELETE', path: '/api/v1/admin/accounts/:id', auth: 'admin', scopes: ['admin:write', 'admin:write:accounts'], pathParams: { id: 'account' } },
  ...(['approve', 'reject', 'enable', 'unsilence', 'unsuspend', 'unsensitive'] as const).map(
    (verb): RouteSpec => ({ method: 'POST', path: `/api/v1/admin/accounts/:id/${verb}`, auth: 'admin', scopes: ['admin:write', 'admin:write:accounts'], pathParams: { id: 'account' } }),
  ),
  {
    method: 'POST',
    path: '/api/v1/admin/accounts/:id/action',
    auth: 'admin',
    scopes: ['admin:write', 'admin:write:accounts'],
    pathParams: { id: 'account' },
    params: { type: 'string', report_id: 'id', warning_preset_id: 'id', text: 'text', send_email_notification: 'bool' },
  },
  { method: 'POST', path: '/api/v1/admin/accounts/:id/role', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'account' }, params: { role_id: 'id' } },
  { method: 'GET', path: '/api/v1/admin/roles', auth: 'admin', scopes: ['admin:read'] },
  { method: 'GET', path: '/api/v1/admin/roles/:id', auth: 'admin', scopes: ['admin:read'], pathParams: { id: 'role' } },
  { method: 'POST', path: '/api/v1/admin/roles', auth: 'admin', scopes: ['admin:write'], params: ROLE_PARAMS },
  ...(['PUT', 'PATCH'] as const).map(
    (method): RouteSpec => ({
      method,
      sameHandlerAs: method === 'PATCH' ? 'PUT' : undefined,
      path: '/api/v1/admin/roles/:id',
      auth: 'admin',
      scopes: ['admin:write'],
      pathParams: { id: 'role' },
      params: ROLE_PARAMS,
    }),
  ),
  { method: 'DELETE', path: '/api/v1/admin/roles/:id', auth: 'admin', scopes: ['admin:write'], pathParams: { id: 'role' } },

  // Suggestions
  { method: 'GET', path: '/api/v2/suggestions', auth: 'user', scopes: READ_ACCOUNTS, params: { limit: 'int' } },
  { method: 'GET', path: '/api/v1/suggestions', auth: 'user', scopes: READ_ACCOUNTS, params: { limit: 'int' } },
  { method: 'DELETE', path: '/api/v1/suggestions/:account_id', auth: 'user', scopes: WRITE_ACCOUNTS, pathParams: { account_id: 'account' }, unknownIdOk: true },

  // Streaming (server-sent events; the WebSocket upgrade is tested in test/streaming)
  { method: 'GET', path: '/api/v1/streaming/health', auth: 'public' },
  { method: 'GET', path: '/api/v1/streaming', auth: 'streaming', scopes: READ_STATUSES, params: { stream: 'string', tag: 'string', list: 'id' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/user', auth: 'streaming', scopes: READ_STATUSES },
  { method: 'GET', path: '/api/v1/streaming/user/notification', auth: 'streaming', scopes: ['read', 'read:notifications'] },
  { method: 'GET', path: '/api/v1/streaming/public', auth: 'streaming', scopes: READ_STATUSES, params: { only_media: 'bool' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/public/local', auth: 'streaming', scopes: READ_STATUSES, params: { only_media: 'bool' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/public/remote', auth: 'streaming', scopes: READ_STATUSES, params: { only_media: 'bool' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/hashtag', auth: 'streaming', scopes: READ_STATUSES, params: { tag: 'string' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/hashtag/local', auth: 'streaming', scopes: READ_STATUSES, params: { tag: 'string' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/list', auth: 'streaming', scopes: READ_STATUSES, params: { list: 'id' }, in: 'query' },
  { method: 'GET', path: '/api/v1/streaming/direct', auth: 'streaming', scopes: READ_STATUSES },
  { method: 'GET', path: '/api/v1/streaming/*', auth: 'public', pathParams: { '*': 'media' } },
];

export function routeKey(r: { method: string; path: string }): string {
  return `${r.method} ${r.path}`;
}
