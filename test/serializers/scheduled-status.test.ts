/** serializeScheduledStatus: row and reserved attachments → Mastodon's ScheduledStatus, exactly. */
import { describe, expect, it } from 'vitest';
import { serializeScheduledStatus, type ScheduledStatusParams } from '../../src/serializers/scheduled-status.ts';
import type { MediaAttachmentRow } from '../../src/serializers/media-attachment.ts';

const PARAMS: ScheduledStatusParams = {
  text: 'Later', poll: { options: ['a', 'b'], expires_in: 600, hide_totals: true }, media_ids: null, sensitive: null,
  spoiler_text: null, visibility: 'private', scheduled_at: null, in_reply_to_id: '1100', language: null,
  application_id: '7', idempotency: null, with_rate_limit: false,
};
const MEDIA: MediaAttachmentRow = {
  id: '55', accountId: '1', statusId: null, type: 'image', processing: 'complete', fileKey: 'media_attachments/files/000/000/055/original/x.png',
  smallKey: 'media_attachments/files/000/000/055/small/x.png', description: 'a view', focus: null,
  meta: { original: { width: 4, height: 2, size: '4x2', aspect: 2 } }, blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', remoteUrl: null,
};

describe('serializeScheduledStatus', () => {
  it('renders the time in UTC with milliseconds, the params, and the attachments', () => {
    const json = serializeScheduledStatus({ id: '42', scheduledAt: new Date('2026-03-01T14:30:00.250Z'), params: PARAMS }, [MEDIA], 'https://files.example/');
    expect(json).toEqual({
      id: '42',
      scheduled_at: '2026-03-01T14:30:00.250Z',
      params: { ...PARAMS, application_id: 7n },
      media_attachments: [{
        id: '55', type: 'image',
        url: 'https://files.example/media_attachments/files/000/000/055/original/x.png',
        preview_url: 'https://files.example/media_attachments/files/000/000/055/small/x.png',
        remote_url: null, preview_remote_url: null, text_url: null,
        meta: { original: { width: 4, height: 2, size: '4x2', aspect: 2 } },
        description: 'a view', blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',
      }],
    });
  });

  it('fills what an older row lacks with Mastodon\'s defaults (nulls, with_rate_limit false)', () => {
    const json = serializeScheduledStatus({ id: '1', scheduledAt: new Date('2026-03-01T00:00:00Z'), params: { text: 'x' } as ScheduledStatusParams }, [], 'https://f/');
    expect(json.params).toEqual({
      text: 'x', poll: null, media_ids: null, sensitive: null, spoiler_text: null, visibility: null, scheduled_at: null,
      in_reply_to_id: null, language: null, application_id: null, idempotency: null, with_rate_limit: false,
    });
    expect(json.scheduled_at).toBe('2026-03-01T00:00:00.000Z');
  });
});
