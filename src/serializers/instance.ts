/**
 * Instance entities: GET /api/v2/instance, GET /api/v1/instance (the deprecated shape many apps
 * still read) and the /api/v1/instance/* satellites (rules, extended description, privacy policy,
 * terms of service, activity, peers, languages, domain blocks).
 *
 * Pure: everything comes in through `InstanceView` (plain data assembled by the service layer
 * from config, settings and counters); no DB, no clock. Field order follows Mastodon's serializers
 * so responses diff cleanly against a real server.
 *
 * Version: clients feature-detect on the leading Mastodon version of `version` and, since 4.3, on
 * `api_versions.mastodon`. Roost reports itself as Mastodon 4.3.0 with API version 2 — the level
 * whose fields this serializer emits (rule hints, `vapid.public_key`, `icon`, `api_versions`,
 * `max_pinned_statuses`) — in the "(compatible; …)" form other compatible servers use, so clients
 * that parse the leading semver keep working and humans still see it is Roost. Later additions
 * that clients use without version gates (about/privacy/terms URLs, `min_age`, `reason_required`,
 * `limited_federation`, `timelines_access`, profile limits, thumbnail alt text) are included as
 * well: extra keys never break a Mastodon client.
 */
import { createHash } from 'node:crypto';
import { LANGUAGES, type Language } from '../lib/languages.ts';
import { renderMarkdown } from '../lib/markdown.ts';
import {
  DEFAULT_PRIVACY_POLICY_MARKDOWN,
  DEFAULT_PRIVACY_POLICY_UPDATED_AT,
  MASTODON_API_VERSION,
  instanceVersionString,
  registrationsEnabled,
  type InstanceLimits,
  type RegistrationsMode,
  type TimelinesAccess,
} from '../lib/instance-policy.ts';
import type {
  InstanceIcon,
  MastodonDomainBlock,
  MastodonExtendedDescription,
  MastodonInstanceActivityWeek,
  MastodonInstancePollsConfiguration,
  MastodonInstanceStatusesConfiguration,
  MastodonInstanceV1,
  MastodonInstanceV2,
  MastodonPrivacyPolicy,
  MastodonRule,
  MastodonTermsOfService,
} from './instance-wire.ts';

// The wire types (instance-wire.ts) and the policy (lib/instance-policy.ts) are part of this module's API.
export * from './instance-wire.ts';
export * from '../lib/instance-policy.ts';

// --- the view: what the serializers take ---------------------------------------------------------

export interface InstanceRule {
  /** Serialized as a string; the database id as text. */
  id: string;
  text: string;
  /** Longer explanation; "" when none. */
  hint: string;
  /** Locale → translated text and hint. */
  translations?: Readonly<Record<string, { text: string; hint: string }>>;
}

/**
 * Everything the instance serializers need, as plain data. `A` is the already-serialized
 * contact account (the account serializer's output), passed through untouched.
 */
export interface InstanceView<A extends object = object> {
  /** The WebFinger domain, e.g. "roost.example". */
  domain: string;
  /** Where the web and API live, e.g. "https://roost.example" (no trailing slash). */
  baseUrl: string;
  /** The streaming API base, e.g. "wss://roost.example". */
  streamingUrl: string;
  /** Roost's own version, e.g. "0.1.0". */
  softwareVersion: string;
  /** Where the source code of this running server can be had (AGPL). */
  sourceUrl: string;
  title: string;
  /** Plain text, one or two sentences. */
  shortDescription: string;
  /** Markdown for /api/v1/instance/extended_description (and v1 `description`). */
  extendedDescription: { markdown: string; updatedAt: Date | null };
  /** Markdown with `%{domain}` placeholders; null = Roost's default policy. */
  privacyPolicy: { markdown: string | null; updatedAt: Date | null };
  contact: { email: string; account: A | null };
  /** ISO 639-1 codes of the server's and its staff's primary languages. */
  languages: readonly string[];
  rules: readonly InstanceRule[];
  registrations: {
    mode: RegistrationsMode;
    /** Markdown shown when registrations are closed; null = none. */
    closedMessageMarkdown: string | null;
    /** Sign-ups in approval mode must give a reason. */
    reasonRequired: boolean;
    /** Minimum age to sign up, if configured. */
    minAge: number | null;
    /** External sign-up URL (single sign-on), if any. */
    url: string | null;
    invitesEnabled: boolean;
  };
  urls: {
    /** Status page of the server, if the operator has one. */
    status: string | null;
    about: string;
    privacyPolicy: string | null;
    termsOfService: string | null;
  };
  /** Base64url VAPID public key for Web Push. */
  vapidPublicKey: string;
  translationEnabled: boolean;
  /** Federation only with allow-listed domains. */
  limitedFederation: boolean;
  timelinesAccess: TimelinesAccess;
  limits: InstanceLimits;
  thumbnail: { url: string; url2x: string; blurhash: string; description: string };
  icons: readonly InstanceIcon[];
  stats: {
    userCount: number;
    statusCount: number;
    domainCount: number;
    /** Users active in the past four weeks. */
    activeMonth: number;
  };
}

// --- GET /api/v2/instance -----------------------------------------------------------------------

export function serializeInstanceV2<A extends object>(view: InstanceView<A>): MastodonInstanceV2<A> {
  const { limits, registrations, timelinesAccess: access } = view;
  const enabled = registrationsEnabled(registrations.mode);
  const approval = registrations.mode === 'approval';
  return {
    domain: view.domain,
    title: view.title,
    version: instanceVersionString(view.softwareVersion),
    source_url: view.sourceUrl,
    description: view.shortDescription,
    usage: {
      users: {
        // Mastodon reports 0 in limited-federation mode so the figure does not leak membership.
        active_month: view.limitedFederation ? 0 : count(view.stats.activeMonth),
      },
    },
    thumbnail: {
      url: view.thumbnail.url,
      blurhash: view.thumbnail.blurhash,
      versions: { '@1x': view.thumbnail.url, '@2x': view.thumbnail.url2x },
      description: view.thumbnail.description,
    },
    icon: view.icons.map((icon) => ({ src: icon.src, size: icon.size })),
    languages: [...view.languages],
    configuration: {
      urls: {
        streaming: view.streamingUrl,
        status: view.urls.status,
        about: view.urls.about,
        privacy_policy: view.urls.privacyPolicy,
        terms_of_service: view.urls.termsOfService,
      },
      vapid: { public_key: view.vapidPublicKey },
      accounts: {
        max_display_name_length: limits.accounts.maxDisplayNameLength,
        max_note_length: limits.accounts.maxNoteLength,
        max_featured_tags: limits.accounts.maxFeaturedTags,
        max_pinned_statuses: limits.accounts.maxPinnedStatuses,
        max_profile_fields: limits.accounts.maxProfileFields,
        profile_field_name_limit: limits.accounts.profileFieldNameLimit,
        profile_field_value_limit: limits.accounts.profileFieldValueLimit,
      },
      statuses: statusesConfiguration(limits),
      media_attachments: {
        description_limit: limits.mediaAttachments.descriptionLimit,
        image_matrix_limit: limits.mediaAttachments.imageMatrixLimit,
        image_size_limit: limits.mediaAttachments.imageSizeLimit,
        supported_mime_types: [...limits.mediaAttachments.supportedMimeTypes],
        video_frame_rate_limit: limits.mediaAttachments.videoFrameRateLimit,
        video_matrix_limit: limits.mediaAttachments.videoMatrixLimit,
        video_size_limit: limits.mediaAttachments.videoSizeLimit,
      },
      polls: pollsConfiguration(limits),
      translation: { enabled: view.translationEnabled },
      timelines_access: {
        live_feeds: { local: access.liveFeeds.local, remote: access.liveFeeds.remote },
        hashtag_feeds: { local: access.hashtagFeeds.local, remote: access.hashtagFeeds.remote },
        trending_link_feeds: { local: access.trendingLinkFeeds.local, remote: access.trendingLinkFeeds.remote },
      },
      limited_federation: view.limitedFederation,
    },
    registrations: {
      enabled,
      approval_required: approval,
      reason_required: approval && registrations.reasonRequired,
      // The message explains why sign-ups are closed; while they are open there is none.
      message: enabled ? null : closedRegistrationsMessage(registrations.closedMessageMarkdown),
      min_age: registrations.minAge,
      url: registrations.url,
    },
    api_versions: { mastodon: MASTODON_API_VERSION },
    wrapstodon: null,
    contact: { email: view.contact.email, account: view.contact.account },
    rules: serializeRules(view.rules),
  };
}

// --- GET /api/v1/instance -----------------------------------------------------------------------

export function serializeInstanceV1<A extends object>(view: InstanceView<A>): MastodonInstanceV1<A> {
  const { limits } = view;
  return {
    uri: view.domain,
    title: view.title,
    short_description: view.shortDescription,
    // "HTML-permitted description": the rendered extended description, which is what v1 apps show
    // on their about screen.
    description: renderMarkdown(view.extendedDescription.markdown),
    email: view.contact.email,
    version: instanceVersionString(view.softwareVersion),
    urls: { streaming_api: view.streamingUrl, status: view.urls.status },
    stats: {
      user_count: count(view.stats.userCount),
      status_count: count(view.stats.statusCount),
      domain_count: count(view.stats.domainCount),
    },
    thumbnail: view.thumbnail.url,
    languages: [...view.languages],
    registrations: registrationsEnabled(view.registrations.mode),
    approval_required: view.registrations.mode === 'approval',
    invites_enabled: view.registrations.invitesEnabled,
    configuration: {
      accounts: { max_featured_tags: limits.accounts.maxFeaturedTags },
      statuses: statusesConfiguration(limits),
      media_attachments: {
        supported_mime_types: [...limits.mediaAttachments.supportedMimeTypes],
        image_size_limit: limits.mediaAttachments.imageSizeLimit,
        image_matrix_limit: limits.mediaAttachments.imageMatrixLimit,
        video_size_limit: limits.mediaAttachments.videoSizeLimit,
        video_frame_rate_limit: limits.mediaAttachments.videoFrameRateLimit,
        video_matrix_limit: limits.mediaAttachments.videoMatrixLimit,
      },
      polls: pollsConfiguration(limits),
    },
    contact_account: view.contact.account,
    rules: serializeRules(view.rules),
  };
}

function statusesConfiguration(limits: InstanceLimits): MastodonInstanceStatusesConfiguration {
  return {
    max_characters: limits.statuses.maxCharacters,
    max_media_attachments: limits.statuses.maxMediaAttachments,
    characters_reserved_per_url: limits.statuses.charactersReservedPerUrl,
  };
}

function pollsConfiguration(limits: InstanceLimits): MastodonInstancePollsConfiguration {
  return {
    max_options: limits.polls.maxOptions,
    max_characters_per_option: limits.polls.maxCharactersPerOption,
    min_expiration: limits.polls.minExpiration,
    max_expiration: limits.polls.maxExpiration,
  };
}

function closedRegistrationsMessage(markdown: string | null): string | null {
  if (markdown === null || markdown.trim() === '') return null;
  return renderMarkdown(markdown);
}

/** Counters are non-negative integers on the wire whatever arrives (NaN, -1, 2.5). */
function count(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

// --- GET /api/v1/instance/rules -----------------------------------------------------------------

export function serializeRule(rule: InstanceRule): MastodonRule {
  const translations: Record<string, { text: string; hint: string }> = {};
  for (const [locale, t] of Object.entries(rule.translations ?? {})) {
    translations[locale] = { text: t.text, hint: t.hint };
  }
  return { id: String(rule.id), text: rule.text, hint: rule.hint, translations };
}

export function serializeRules(rules: readonly InstanceRule[]): MastodonRule[] {
  return rules.map(serializeRule);
}

// --- GET /api/v1/instance/extended_description --------------------------------------------------

/** `updated_at` is null until an operator has written a description (as in Mastodon). */
export function serializeExtendedDescription(
  view: Pick<InstanceView, 'extendedDescription'>,
): MastodonExtendedDescription {
  const { markdown, updatedAt } = view.extendedDescription;
  return {
    updated_at: updatedAt ? updatedAt.toISOString() : null,
    content: renderMarkdown(markdown),
  };
}

// --- GET /api/v1/instance/privacy_policy --------------------------------------------------------

export function serializePrivacyPolicy(view: Pick<InstanceView, 'privacyPolicy' | 'domain'>): MastodonPrivacyPolicy {
  const custom = view.privacyPolicy.markdown;
  const useCustom = custom !== null && custom.trim() !== '';
  const markdown = useCustom ? custom : DEFAULT_PRIVACY_POLICY_MARKDOWN;
  const updatedAt = (useCustom ? view.privacyPolicy.updatedAt : null) ?? DEFAULT_PRIVACY_POLICY_UPDATED_AT;
  return {
    updated_at: updatedAt.toISOString(),
    content: renderMarkdown(markdown.replaceAll('%{domain}', view.domain)),
  };
}

// --- GET /api/v1/instance/terms_of_service ------------------------------------------------------

export interface TermsOfServiceView {
  /** "YYYY-MM-DD". */
  effectiveDate: string;
  /** Whether these terms are in effect now (the caller compares with its clock). */
  effective: boolean;
  markdown: string;
  /** Effective date of newer terms, if any. */
  succeededBy: string | null;
}

export function serializeTermsOfService(terms: TermsOfServiceView, domain: string): MastodonTermsOfService {
  return {
    effective_date: terms.effectiveDate,
    effective: terms.effective,
    content: renderMarkdown(terms.markdown.replaceAll('%{domain}', domain)),
    succeeded_by: terms.succeededBy,
  };
}

// --- GET /api/v1/instance/activity --------------------------------------------------------------

export interface InstanceActivityWeek {
  /** Start of the week (Monday 00:00 UTC), UNIX seconds. */
  weekStart: number;
  statuses: number;
  logins: number;
  registrations: number;
}

/** Mastodon casts every number in this endpoint to a string. */
export function serializeInstanceActivity(weeks: readonly InstanceActivityWeek[]): MastodonInstanceActivityWeek[] {
  return weeks.map((w) => ({
    week: String(Math.floor(w.weekStart)),
    statuses: String(count(w.statuses)),
    logins: String(count(w.logins)),
    registrations: String(count(w.registrations)),
  }));
}

// --- GET /api/v1/instance/peers -----------------------------------------------------------------

/** Known remote domains, deduplicated (case-insensitively) and sorted. */
export function serializeInstancePeers(domains: Iterable<string>): string[] {
  const unique = new Set<string>();
  for (const d of domains) {
    const domain = d.trim().toLowerCase();
    if (domain !== '') unique.add(domain);
  }
  return [...unique].sort();
}

// --- GET /api/v1/instance/languages -------------------------------------------------------------

export function serializeInstanceLanguages(): Language[] {
  return LANGUAGES.map((l) => ({ code: l.code, name: l.name }));
}

// --- GET /api/v1/instance/domain_blocks ---------------------------------------------------------

export interface PublicDomainBlock {
  domain: string;
  severity: 'silence' | 'suspend';
  /** Shown to the public; null or "" = no comment. */
  publicComment: string | null;
  /** Show the domain partly starred out. */
  obfuscate: boolean;
}

/** A domain with its middle letters replaced by "*", dots kept: "daji******.com". */
export function obfuscateDomain(domain: string): string {
  const chars = [...domain];
  const visible = Math.floor(chars.length / 4);
  return chars.map((c, i) => (i > visible && i < chars.length - visible && c !== '.' ? '*' : c)).join('');
}

/** `withComment`: the instance shows its reasons to this viewer (Mastodon's show_domain_blocks_rationale). */
export function serializeDomainBlock(block: PublicDomainBlock, withComment = true): MastodonDomainBlock {
  const out: MastodonDomainBlock = {
    domain: block.obfuscate ? obfuscateDomain(block.domain) : block.domain,
    digest: createHash('sha256').update(block.domain).digest('hex'),
    severity: block.severity,
  };
  if (withComment && block.publicComment) out.comment = block.publicComment;
  return out;
}

export function serializeDomainBlocks(blocks: readonly PublicDomainBlock[], withComment = true): MastodonDomainBlock[] {
  return blocks.map((b) => serializeDomainBlock(b, withComment));
}
