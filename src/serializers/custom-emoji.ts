/**
 * Mastodon's CustomEmoji entity (entities/CustomEmoji.md): a local emoji's image and static PNG
 * from the media storage, a remote copy's image at its remote URL (Roost does not download
 * remote media yet); `category` only when it has one.
 */
export interface CustomEmojiRow {
  id: string;
  shortcode: string;
  /** null: local. */
  domain: string | null;
  /** Local: media storage keys. */
  imageKey: string | null;
  staticKey: string | null;
  /** Remote: the image's URL. */
  imageUrl: string | null;
  visibleInPicker: boolean;
  category: string | null;
  updatedAt: Date;
}

export interface MastodonCustomEmoji {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
  category?: string;
}

export function serializeCustomEmoji(e: CustomEmojiRow, mediaBaseUrl: string): MastodonCustomEmoji {
  const url = e.imageKey ? `${mediaBaseUrl}${e.imageKey}` : (e.imageUrl ?? '');
  const staticUrl = e.staticKey ? `${mediaBaseUrl}${e.staticKey}` : url;
  return {
    shortcode: e.shortcode,
    url,
    static_url: staticUrl,
    visible_in_picker: e.visibleInPicker,
    ...(e.category ? { category: e.category } : {}),
  };
}

/** Key of an emoji in the lookups: its domain (empty: local) and its shortcode. */
export function emojiKey(domain: string | null, shortcode: string): string {
  return `${domain ?? ''} ${shortcode}`;
}

/** A local emoji as the admin API shows it (Roost's; Mastodon has no admin API for emojis): its id, state and dates too. */
export function serializeAdminCustomEmoji(
  e: CustomEmojiRow & { disabled: boolean; categoryId: string | null; createdAt: Date },
  mediaBaseUrl: string,
): Record<string, unknown> {
  const { category: _c, ...rest } = serializeCustomEmoji(e, mediaBaseUrl);
  return {
    id: e.id,
    ...rest,
    category: e.category,
    category_id: e.categoryId,
    disabled: e.disabled,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
