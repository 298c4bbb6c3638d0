/**
 * Mastodon's StatusEdit entity (entities/StatusEdit.md, REST::StatusEditSerializer), pure: one
 * version of a status from `status_edits` (or the current status, for one never edited). `poll`
 * only when the version recorded poll options. Media of a version render once media exist (the
 * row keeps their ids and descriptions); `emojis` empty until custom emojis exist.
 */
import type { Account } from '../db/entities/index.ts';
import { serializeAccount, type AccountView, type MastodonAccount } from './account.ts';

export interface StatusEditRow {
  accountId: string;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  createdAt: Date;
  orderedMediaAttachmentIds: string[] | null;
  mediaDescriptions: string[] | null;
  pollOptions: string[] | null;
}

export interface StatusEditView {
  accounts: Map<string, Account>;
  accountView: AccountView;
}

export interface MastodonStatusEdit {
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  created_at: string;
  account: MastodonAccount;
  poll?: { options: { title: string }[] };
  media_attachments: unknown[];
  emojis: unknown[];
}

/** The version, or null when its account is not in the view. */
export function serializeStatusEdit(edit: StatusEditRow, view: StatusEditView): MastodonStatusEdit | null {
  const account = view.accounts.get(edit.accountId);
  if (!account) return null;
  const json: MastodonStatusEdit = {
    content: edit.content,
    spoiler_text: edit.spoilerText,
    sensitive: edit.sensitive,
    created_at: edit.createdAt.toISOString(),
    account: serializeAccount(account, view.accountView),
    media_attachments: [],
    emojis: [],
  };
  if (edit.pollOptions && edit.pollOptions.length > 0) json.poll = { options: edit.pollOptions.map((title) => ({ title })) };
  return json;
}
