/**
 * Mastodon's StatusEdit entity (entities/StatusEdit.md, REST::StatusEditSerializer), pure: one
 * version of a status from `status_edits` (or the current status, for one never edited). `poll`
 * only when the version recorded poll options. `media_attachments`: the attachments the version
 * names, in its order, each with the description it had then (Mastodon's PreservedMediaAttachment;
 * one whose row is gone is left out); `emojis` empty until custom emojis exist.
 */
import type { Account } from '../db/entities/index.ts';
import { serializeAccount, type AccountView, type MastodonAccount } from './account.ts';
import { serializeMediaAttachment, type MastodonMediaAttachment, type MediaAttachmentRow } from './media-attachment.ts';

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
  /** The attachments the versions name, by id. */
  media: Map<string, MediaAttachmentRow>;
  /** The media storage's public base (MediaStorage.baseUrl). */
  mediaBaseUrl: string;
}

export interface MastodonStatusEdit {
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  created_at: string;
  account: MastodonAccount;
  poll?: { options: { title: string }[] };
  media_attachments: MastodonMediaAttachment[];
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
    media_attachments: (edit.orderedMediaAttachmentIds ?? []).flatMap((id, i) => {
      const m = view.media.get(id);
      return m ? [serializeMediaAttachment({ ...m, description: edit.mediaDescriptions?.[i] ?? null }, view.mediaBaseUrl)] : [];
    }),
    emojis: [],
  };
  if (edit.pollOptions && edit.pollOptions.length > 0) json.poll = { options: edit.pollOptions.map((title) => ({ title })) };
  return json;
}
