/**
 * Editing a status, as Mastodon's UpdateStatusService (PUT /api/v1/statuses/:id):
 *
 * - only the author's own statuses (others' are a 404, as Mastodon scopes the lookup to the
 *   author); a reblog cannot be edited (404 too: there is no post of the author's there to edit);
 * - the PUT replaces text, content warning and sensitivity (absent = empty / false, a content
 *   warning makes it sensitive), the language stays when none is given; the text is validated as on
 *   create (blank, length with a URL as 23 characters, language code), then re-rendered;
 * - mentions are extracted again: new ones are added; one no longer in the text becomes silent (the
 *   account keeps its access and is not notified again, as Mastodon's ProcessMentionsService);
 *   hashtags are replaced;
 * - an edit that changes nothing writes nothing (Mastodon's NoChangesSubmittedError);
 * - history: the first edit stores the original (at its creation time) before the new version, so
 *   /history has every version; each row in `status_edits`;
 * - a changed text drops the status's card and queues a new fetch (services/preview-cards.ts);
 * - one outbox fact, `status.updated`, for federation (Update(Note)) and the `update` notification.
 *
 * The new version's rows (the status, its version, mentions, hashtags, card, fact) are written by
 * services/status-writer.ts, as a remote edit's; the checks and the diffing stay here.
 *
 * Media and polls (services/status-media-edits.ts): media_ids added, removed and reordered with
 * their media_attributes, the poll replaced when its structure changes; each version records its
 * media (with their descriptions then) and poll options (services/status-versions.ts). All in one
 * transaction: a refused edit leaves every row as it was.
 */
import type { StatusVisibility } from '../db/entities/status.entity.ts';
import type { Services } from '../context.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { Validation, notFound } from '../lib/errors.ts';
import { isId } from './reads/page.ts';
import { formatStatusText, validateStatusText } from './statuses.ts';
import type { PollParams } from './polls.ts';
import { applyMediaEdit, applyPollEdit, checkMediaAndPollEdit, type MediaAttributeInput } from './status-media-edits.ts';
import { recordOriginalVersion } from './status-versions.ts';
import { rewriteStatus } from './status-writer.ts';

export interface EditStatusInput {
  status?: string;
  spoilerText?: string;
  sensitive?: boolean;
  language?: string | null;
  /** The attachments afterwards, in order (absent: none, as Mastodon's PUT). */
  mediaIds?: string[];
  /** Description and focus of attachments named in mediaIds (Mastodon's media_attributes[]). */
  mediaAttributes?: MediaAttributeInput[];
  /** The poll afterwards (absent or null: none, as Mastodon's PUT). */
  poll?: PollParams | null;
}

interface CurrentStatus {
  id: string;
  text: string;
  spoiler_text: string;
  sensitive: boolean;
  language: string | null;
  visibility: StatusVisibility;
  created_at: Date;
}

/** Thrown inside the transaction when nothing changed: it rolls back what was written on the way. */
class NoChanges extends Error {}

/** Edits the author's status. Returns its id (unchanged input: the status as it was, nothing written). */
export async function editStatus(services: Services, accountId: string, id: string, input: EditStatusInput): Promise<string> {
  if (!isId(id)) throw notFound();
  const own = async (sql: Sql, lock: boolean): Promise<CurrentStatus> => {
    const [row] = await sql.query<CurrentStatus & { reblog_of_id: string | null }>(
      `select id::text, text, spoiler_text, sensitive, language, visibility, created_at, reblog_of_id::text from statuses
        where id = $1 and account_id = $2 and deleted_at is null${lock ? ' for update' : ''}`,
      [id, accountId],
    );
    if (!row || row.reblog_of_id) throw notFound();
    return { ...row, created_at: new Date(row.created_at) };
  };
  // Someone else's status (or none) is a 404 before anything about the input is said.
  await own(services.db.sql, false);

  const text = (input.status ?? '').replace(/\r\n?/g, '\n');
  const spoilerText = (input.spoilerText ?? '').trim();
  const language = input.language ? input.language.trim() : null;
  const v = new Validation();
  const media = checkMediaAndPollEdit(services, v, input);
  // A status with media may have no text (Mastodon's `unless: -> { with_media? }`).
  validateStatusText(services, v, text, spoilerText, language, { allowBlank: media.mediaIds.length > 0 });
  v.throwIfInvalid();
  const { content, targets, tags } = await formatStatusText(services, text);
  const now = services.clock.now();

  // An entity manager's transaction: the poll actors step in it (the actor store's way).
  try {
    return await services.db.em().transactional(async (em) => {
      const sql = sqlFromEm(em);
      const current = await own(sql, true);
      const sensitive = (input.sensitive ?? false) || spoilerText !== '';
      const nextLanguage = language ?? current.language;
      // The original as the first version (Mastodon's create_previous_edit!), before anything changes.
      await recordOriginalVersion(services, sql, id, accountId, current.created_at);
      const mediaChanged = await applyMediaEdit(sql, id, accountId, media, now);
      const pollChanged = await applyPollEdit(services, em, id, accountId, media, now);
      const textChanged = text !== current.text;
      if (!textChanged && spoilerText === current.spoiler_text && sensitive === current.sensitive && nextLanguage === current.language && !mediaChanged && !pollChanged) {
        throw new NoChanges();
      }
      await rewriteStatus(services, sql, {
        id,
        accountId,
        local: true,
        visibility: current.visibility,
        text,
        content,
        spoilerText,
        sensitive,
        language: nextLanguage,
        editedAt: now,
        mentions: [...targets.values()].map((t) => ({ accountId: t.id, silent: false })),
        tags,
        textChanged,
      }, now, 'client');
      return id;
    });
  } catch (e) {
    // Mastodon's NoChangesSubmittedError: nothing written, the status as it was.
    if (e instanceof NoChanges) return id;
    throw e;
  }
}
