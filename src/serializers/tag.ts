/**
 * Mastodon's Tag entity (entities/Tag.md, 4.4): id, the name as first written, its URL here, the
 * week of history (strings, today first) and, for a signed-in viewer, `following` and `featuring`.
 */
export interface TagHistoryDay {
  /** UNIX time of the day's midnight (UTC), as a string. */
  day: string;
  uses: string;
  accounts: string;
}

export interface TagRow {
  id: string;
  name: string;
  history: TagHistoryDay[];
  following: boolean;
  featuring: boolean;
}

export interface MastodonTag {
  id: string;
  name: string;
  url: string;
  history: TagHistoryDay[];
  following?: boolean;
  featuring?: boolean;
}

/** The URL of a tag's page: its name in lower case (one page whatever the case). */
export function tagUrl(baseUrl: string, name: string): string {
  return `${baseUrl}/tags/${encodeURIComponent(name.toLowerCase())}`;
}

export function serializeTag(tag: TagRow, view: { baseUrl: string; signedIn: boolean }): MastodonTag {
  const json: MastodonTag = { id: tag.id, name: tag.name, url: tagUrl(view.baseUrl, tag.name), history: tag.history };
  if (view.signedIn) {
    json.following = tag.following;
    json.featuring = tag.featuring;
  }
  return json;
}
