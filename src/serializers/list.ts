/** Mastodon's List entity (entities/List.md): id, title, replies_policy, exclusive. Pure. */

export type RepliesPolicy = 'followed' | 'list' | 'none';

export interface ListRow {
  id: string;
  title: string;
  repliesPolicy: RepliesPolicy;
  exclusive: boolean;
}

export interface MastodonList {
  id: string;
  title: string;
  replies_policy: RepliesPolicy;
  exclusive: boolean;
}

export function serializeList(row: ListRow): MastodonList {
  return { id: row.id, title: row.title, replies_policy: row.repliesPolicy, exclusive: row.exclusive };
}
