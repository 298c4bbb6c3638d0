/**
 * Rows → ActivityPub for custom emojis and featured tags (pure builders beside to-as.ts): an
 * `Emoji` tag as Mastodon's ActivityPub::EmojiSerializer writes it (id, `:name:`, `updated`, an
 * `Image` icon with its media type), and the actor's `featuredTags` items (one `Hashtag` per
 * featured tag, linking the account's statuses with it).
 */
import { Emoji, Hashtag, Image } from '@fedify/vocab';
import type { FeaturedTagRow } from '../../serializers/featured-tag.ts';
import { toInstant } from './to-as.ts';

/** What an outgoing Emoji tag is made of (a local emoji). */
export interface EmojiFacts {
  /** Its id (emojiUri). */
  uri: string;
  shortcode: string;
  url: string;
  updatedAt: Date;
}

const TYPES: Record<string, string> = { png: 'image/png', gif: 'image/gif', webp: 'image/webp' };

/** The Emoji's id: `<base>/emojis/<id>`, as Mastodon names local emojis. */
export function emojiUri(baseUrl: string, id: string): string {
  return `${baseUrl}/emojis/${id}`;
}

export function toAsEmoji(e: EmojiFacts): Emoji {
  const ext = /\.([a-z0-9]+)$/i.exec(new URL(e.url).pathname)?.[1]?.toLowerCase() ?? '';
  return new Emoji({
    id: new URL(e.uri),
    name: `:${e.shortcode}:`,
    updated: toInstant(e.updatedAt),
    icon: new Image({ url: new URL(e.url), mediaType: TYPES[ext] ?? null }),
  });
}

export function toAsFeaturedTags(baseUrl: string, rows: readonly FeaturedTagRow[]): Hashtag[] {
  return rows.map(
    (r) => new Hashtag({ href: new URL(`${baseUrl}/@${r.username}/tagged/${encodeURIComponent(r.name.toLowerCase())}`), name: `#${r.name}` }),
  );
}
