/**
 * The tables as Kysely sees them (what a select returns), for typed queries on the read side.
 * Written by hand beside the migrations: a migration that adds or changes a column updates its
 * table here too. bigint ids are strings (cast `::text` in raw SQL, as the drivers differ), dates
 * are Date, jsonb is parsed.
 */
import type { Kysely } from 'kysely';

type Id = string;
type Ts = Date;

export interface AccountsTable {
  id: Id;
  username: string;
  domain: string | null;
  display_name: string;
  note: string;
  uri: string;
  url: string | null;
  inbox_url: string | null;
  shared_inbox_url: string | null;
  outbox_url: string | null;
  followers_url: string | null;
  following_url: string | null;
  featured_url: string | null;
  actor_type: string;
  locked: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  hide_collections: boolean | null;
  avatar_url: string | null;
  header_url: string | null;
  fields: { name: string; value: string; verified_at: string | null }[];
  public_key_pem: string | null;
  moved_to_account_id: Id | null;
  also_known_as: string[];
  silenced_at: Ts | null;
  suspended_at: Ts | null;
  /** Media forced sensitive by a moderator (the account actor's `sensitizing` region). */
  sensitized_at: Ts | null;
  machine: Record<string, unknown> | null;
  machine_version: number;
  fetched_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface AccountStatsTable {
  account_id: Id;
  followers_count: number;
  following_count: number;
  statuses_count: number;
  last_status_at: Ts | null;
}

export interface UsersTable {
  id: Id;
  account_id: Id;
  email: string;
  encrypted_password: string;
  role_id: Id | null;
  confirmed_at: Ts | null;
  approved: boolean;
  disabled: boolean;
  locale: string | null;
  sign_up_reason: string | null;
  current_sign_in_at: Ts | null;
  last_sign_in_at: Ts | null;
  settings: Record<string, unknown>;
  created_by_application_id: Id | null;
  sign_up_ip: string | null;
  invited_by_account_id: Id | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface UserRolesTable {
  id: Id;
  name: string;
  color: string;
  permissions: Id;
  position: number;
  highlighted: boolean;
  created_at: Ts;
  updated_at: Ts;
}

export interface FollowsTable {
  id: Id;
  account_id: Id;
  target_account_id: Id;
  uri: string | null;
  state: string;
  show_reblogs: boolean;
  notify: boolean;
  languages: string[] | null;
  machine: Record<string, unknown> | null;
  machine_version: number;
  created_at: Ts;
  updated_at: Ts;
}

export interface StatusesTable {
  id: Id;
  account_id: Id;
  uri: string;
  url: string | null;
  text: string;
  content: string;
  spoiler_text: string;
  visibility: string;
  sensitive: boolean;
  language: string | null;
  local: boolean;
  in_reply_to_id: Id | null;
  reblog_of_id: Id | null;
  conversation_id: Id | null;
  /** Who may quote it (public, followers, nobody); null: a remote status whose server said nothing. */
  quote_policy: string | null;
  created_at: Ts;
  updated_at: Ts;
  deleted_at: Ts | null;
}

export interface OAuthApplicationsTable {
  id: Id;
  name: string;
  website: string | null;
  redirect_uris: string[];
  scopes: string;
  client_id: string;
  client_secret: string;
  owner_account_id: Id | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface OAuthAccessTokensTable {
  id: Id;
  application_id: Id | null;
  user_id: Id | null;
  token_hash: string;
  scopes: string;
  expires_at: Ts | null;
  revoked_at: Ts | null;
  last_used_at: Ts | null;
  created_at: Ts;
}

/** blocks, mutes, account_pins: one viewer → target row each. */
export interface AccountToAccountTable {
  id: Id;
  account_id: Id;
  target_account_id: Id;
  created_at: Ts;
}

export interface BlocksTable extends AccountToAccountTable {
  uri: string | null;
}

export interface MutesTable extends AccountToAccountTable {
  hide_notifications: boolean;
  expires_at: Ts | null;
}

export interface AccountNotesTable {
  account_id: Id;
  target_account_id: Id;
  comment: string;
  updated_at: Ts;
}

export interface AccountDomainBlocksTable {
  id: Id;
  account_id: Id;
  domain: string;
  created_at: Ts;
}

export interface PollsTable {
  id: Id;
  status_id: Id;
  account_id: Id;
  local: boolean;
  uri: string | null;
  options: string[];
  multiple: boolean;
  hide_totals: boolean;
  expires_at: Ts | null;
  state: 'open' | 'closed' | 'deleted';
  cached_tallies: number[];
  votes_count: number;
  voters_count: number;
  closed_at: Ts | null;
  machine: Record<string, unknown> | null;
  machine_version: number;
  created_at: Ts;
  updated_at: Ts;
}

export interface PollVotesTable {
  id: Id;
  poll_id: Id;
  /** A local account id, or a remote actor URI. */
  voter: string;
  account_id: Id | null;
  choices: number[];
  uri: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface ScheduledStatusesTable {
  id: Id;
  account_id: Id;
  application_id: Id | null;
  scheduled_at: Ts;
  params: Record<string, unknown>;
  idempotency_key: string | null;
  state: 'scheduled' | 'published' | 'cancelled' | 'failed';
  status_id: Id | null;
  failure: string | null;
  machine: Record<string, unknown> | null;
  machine_version: number;
  created_at: Ts;
  updated_at: Ts;
}

export interface DB {
  accounts: AccountsTable;
  account_stats: AccountStatsTable;
  users: UsersTable;
  user_roles: UserRolesTable;
  follows: FollowsTable;
  statuses: StatusesTable;
  oauth_applications: OAuthApplicationsTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  blocks: BlocksTable;
  mutes: MutesTable;
  account_pins: AccountToAccountTable;
  account_notes: AccountNotesTable;
  account_domain_blocks: AccountDomainBlocksTable;
  polls: PollsTable;
  poll_votes: PollVotesTable;
  scheduled_statuses: ScheduledStatusesTable;
}

export type RoostKysely = Kysely<DB>;
