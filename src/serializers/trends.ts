/**
 * The trend entities, pure: Trends::Link (entities/PreviewCard.md#trends-link: a PreviewCard with
 * its week of `history`), and the admin forms Mastodon's admin trend serializers add: Admin::Tag
 * (entities/Tag.md#admin: `trendable`, `usable`, `requires_review`), and `id` plus
 * `requires_review` on a link or a status.
 */
import { serializePreviewCard, type MastodonPreviewCard, type PreviewCardRow } from './preview-card.ts';
import type { MastodonTag, TagHistoryDay } from './tag.ts';

export interface MastodonTrendLink extends MastodonPreviewCard {
  history: TagHistoryDay[];
}

export function serializeTrendLink(link: { card: PreviewCardRow; history: TagHistoryDay[] }): MastodonTrendLink {
  return { ...serializePreviewCard(link.card), history: link.history };
}

/** What review adds to an entity in the admin lists (`trendable` null: not reviewed yet). */
export function reviewFields(trendable: boolean | null): { requires_review: boolean } {
  return { requires_review: trendable === null };
}

export interface MastodonAdminTag extends MastodonTag {
  trendable: boolean;
  usable: boolean;
  requires_review: boolean;
}

export function serializeAdminTag(tag: MastodonTag, trendable: boolean | null): MastodonAdminTag {
  return { ...tag, trendable: trendable === true, usable: true, ...reviewFields(trendable) };
}
