/** The instance entities on the wire: Mastodon's JSON shapes, in Mastodon's spelling and field order. */
import type { FeedAccess } from '../lib/instance-policy.ts';

export interface InstanceIcon {
  src: string;
  /** "WIDTHxHEIGHT", e.g. "192x192". */
  size: string;
}


export interface MastodonRule {
  id: string;
  text: string;
  hint: string;
  translations: Record<string, { text: string; hint: string }>;
}

export interface MastodonInstanceStatusesConfiguration {
  max_characters: number;
  max_media_attachments: number;
  characters_reserved_per_url: number;
}

export interface MastodonInstancePollsConfiguration {
  max_options: number;
  max_characters_per_option: number;
  min_expiration: number;
  max_expiration: number;
}

export interface MastodonInstanceV2<A extends object = object> {
  domain: string;
  title: string;
  version: string;
  source_url: string;
  description: string;
  usage: { users: { active_month: number } };
  thumbnail: {
    url: string;
    blurhash: string;
    versions: { '@1x': string; '@2x': string };
    description: string;
  };
  icon: InstanceIcon[];
  languages: string[];
  configuration: {
    urls: {
      streaming: string;
      status: string | null;
      about: string;
      privacy_policy: string | null;
      terms_of_service: string | null;
    };
    vapid: { public_key: string };
    accounts: {
      max_display_name_length: number;
      max_note_length: number;
      max_featured_tags: number;
      max_pinned_statuses: number;
      max_profile_fields: number;
      profile_field_name_limit: number;
      profile_field_value_limit: number;
    };
    statuses: MastodonInstanceStatusesConfiguration;
    media_attachments: {
      description_limit: number;
      image_matrix_limit: number;
      image_size_limit: number;
      supported_mime_types: string[];
      video_frame_rate_limit: number;
      video_matrix_limit: number;
      video_size_limit: number;
    };
    polls: MastodonInstancePollsConfiguration;
    translation: { enabled: boolean };
    timelines_access: {
      live_feeds: { local: FeedAccess; remote: FeedAccess };
      hashtag_feeds: { local: 'public' | 'authenticated'; remote: FeedAccess };
      trending_link_feeds: { local: 'public' | 'authenticated'; remote: FeedAccess };
    };
    limited_federation: boolean;
  };
  registrations: {
    enabled: boolean;
    approval_required: boolean;
    reason_required: boolean;
    message: string | null;
    min_age: number | null;
    url: string | null;
  };
  api_versions: { mastodon: number };
  /** Annual-report campaign; Roost has none. */
  wrapstodon: null;
  contact: { email: string; account: A | null };
  rules: MastodonRule[];
}

export interface MastodonInstanceV1<A extends object = object> {
  uri: string;
  title: string;
  short_description: string;
  description: string;
  email: string;
  version: string;
  /** `status` (the operator's status page) is a Roost addition next to Mastodon's streaming_api. */
  urls: { streaming_api: string; status: string | null };
  stats: { user_count: number; status_count: number; domain_count: number };
  thumbnail: string | null;
  languages: string[];
  registrations: boolean;
  approval_required: boolean;
  invites_enabled: boolean;
  configuration: {
    accounts: { max_featured_tags: number };
    statuses: MastodonInstanceStatusesConfiguration;
    media_attachments: {
      supported_mime_types: string[];
      image_size_limit: number;
      image_matrix_limit: number;
      video_size_limit: number;
      video_frame_rate_limit: number;
      video_matrix_limit: number;
    };
    polls: MastodonInstancePollsConfiguration;
  };
  contact_account: A | null;
  rules: MastodonRule[];
}

export interface MastodonExtendedDescription {
  updated_at: string | null;
  content: string;
}

export interface MastodonPrivacyPolicy {
  updated_at: string;
  content: string;
}

export interface MastodonTermsOfService {
  effective_date: string;
  effective: boolean;
  content: string;
  succeeded_by: string | null;
}

export interface MastodonInstanceActivityWeek {
  week: string;
  statuses: string;
  logins: string;
  registrations: string;
}

export interface MastodonDomainBlock {
  domain: string;
  digest: string;
  severity: 'silence' | 'suspend';
  comment?: string;
}

