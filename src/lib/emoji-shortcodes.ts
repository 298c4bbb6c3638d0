/**
 * Custom emoji shortcodes in text, as Mastodon's CustomEmoji::SCAN_RE finds them: `:name:` where
 * the name is two or more ASCII letters, digits or underscores, not glued to a letter, digit or
 * colon on either side. Matched as written (Mastodon's shortcodes are case-sensitive).
 */
export const SHORTCODE = /^[a-zA-Z0-9_]{2,128}$/;

const SCAN = /(?<![\p{L}\p{N}:]):([a-zA-Z0-9_]{2,128}):(?![\p{L}\p{N}:])/gu;

/** At most this many distinct shortcodes are looked up for one text. */
export const MAX_SHORTCODES = 64;

/** The distinct shortcodes in `texts`, in order of appearance (at most MAX_SHORTCODES). */
export function emojiShortcodes(...texts: readonly (string | null | undefined)[]): string[] {
  const found = new Set<string>();
  for (const text of texts) {
    if (!text || !text.includes(':')) continue;
    for (const m of text.matchAll(SCAN)) {
      found.add(m[1]!);
      if (found.size >= MAX_SHORTCODES) return [...found];
    }
  }
  return [...found];
}
