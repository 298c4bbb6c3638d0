import { describe, expect, it } from 'vitest';
import { buildPushPayload, pushBody, pushTitle, truncateBody, type PushableNotification } from '../../src/push/payload.ts';

const from = (type: string, extra: Partial<PushableNotification> = {}): PushableNotification => ({
  id: '7',
  type,
  account: { id: '1', acct: 'bob@remote.example', display_name: '', avatar_static: 'https://x.example/a.png', note: '<p>I like <b>trains</b> &amp; boats</p>' },
  status: null,
  ...extra,
});

describe('push payload', () => {
  it("titles notifications with Mastodon's English subjects, the username standing in for an empty display name", () => {
    expect(
      ['mention', 'status', 'reblog', 'follow', 'follow_request', 'favourite', 'poll', 'update', 'admin.sign_up', 'admin.report'].map((t) => pushTitle(from(t))),
    ).toEqual([
      'You were mentioned by bob',
      'bob just posted',
      'bob boosted your post',
      'bob is now following you',
      'Pending follower: bob',
      'bob favorited your post',
      'A poll by bob has ended',
      'bob edited a post',
      'bob signed up',
      'bob submitted a report',
    ]);
    expect(pushTitle(from('follow', { account: { ...from('x').account, display_name: 'Bob 🚂' } }))).toBe('Bob 🚂 is now following you');
  });

  it('bodies: the content warning first, else the status text, else the note; plain text cut as Rails truncate', () => {
    expect(pushBody(from('follow'))).toBe('I like trains & boats');
    expect(pushBody(from('mention', { status: { id: '2', content: '<p>secret</p>', spoiler_text: 'CW: food' } }))).toBe('CW: food');
    expect(pushBody(from('mention', { status: { id: '2', content: '<p>line one</p><p>line &lt;two&gt;</p>', spoiler_text: '' } }))).toBe('line one line <two>');
    expect(truncateBody('a'.repeat(140))).toBe('a'.repeat(140));
    expect(truncateBody('a'.repeat(141))).toBe(`${'a'.repeat(137)}...`);
    expect(truncateBody('🚂'.repeat(141))).toBe(`${'🚂'.repeat(137)}...`);
  });

  it('has exactly the fields of Web::NotificationSerializer, in its order', () => {
    const p = buildPushPayload(from('follow'), 'tok', null);
    expect(Object.keys(p)).toEqual(['access_token', 'preferred_locale', 'notification_id', 'notification_type', 'icon', 'title', 'body']);
    expect(p).toEqual({
      access_token: 'tok',
      preferred_locale: 'en',
      notification_id: '7',
      notification_type: 'follow',
      icon: 'https://x.example/a.png',
      title: 'bob is now following you',
      body: 'I like trains & boats',
    });
    expect(buildPushPayload(from('follow'), 'tok', 'de').preferred_locale).toBe('de');
  });
});
