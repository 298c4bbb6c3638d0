/**
 * Mastodon's PreviewCard entity (entities/PreviewCard.md, REST::PreviewCardSerializer), pure. The
 * `url` is the link as the status wrote it (Mastodon's original_url) when known, else the card's.
 * `authors` holds one author built from author_name/author_url (no fediverse account yet), as
 * Mastodon's PreviewCard#authors does. `image` is the remote image URL (not proxied yet).
 */
export interface PreviewCardRow {
  url: string;
  /** The URL as linked from the status (preview_cards_statuses.url), if any. */
  originalUrl: string | null;
  title: string;
  description: string;
  language: string | null;
  type: 'link' | 'photo' | 'video' | 'rich';
  authorName: string;
  authorUrl: string;
  providerName: string;
  providerUrl: string;
  html: string;
  width: number;
  height: number;
  imageUrl: string | null;
  imageDescription: string;
  embedUrl: string;
  blurhash: string | null;
  publishedAt: Date | null;
}

export interface MastodonPreviewCard {
  url: string;
  title: string;
  description: string;
  language: string | null;
  type: PreviewCardRow['type'];
  author_name: string;
  author_url: string;
  provider_name: string;
  provider_url: string;
  html: string;
  width: number;
  height: number;
  image: string | null;
  image_description: string;
  embed_url: string;
  blurhash: string | null;
  published_at: string | null;
  authors: { name: string; url: string; account: null }[];
}

export function serializePreviewCard(card: PreviewCardRow): MastodonPreviewCard {
  return {
    url: card.originalUrl || card.url,
    title: card.title,
    description: card.description,
    language: card.language,
    type: card.type,
    author_name: card.authorName,
    author_url: card.authorUrl,
    provider_name: card.providerName,
    provider_url: card.providerUrl,
    html: card.html,
    width: card.width,
    height: card.height,
    image: card.imageUrl,
    image_description: card.imageDescription,
    embed_url: card.embedUrl,
    blurhash: card.blurhash,
    published_at: card.publishedAt ? card.publishedAt.toISOString() : null,
    authors: [{ name: card.authorName, url: card.authorUrl, account: null }],
  };
}
