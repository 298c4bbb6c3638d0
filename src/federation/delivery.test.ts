import { describe, it, expect } from 'vitest';
import { extractInboxes, interleaveByHost, retryAfterMs } from './delivery.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Mon, 23 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Mon, 23 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs('-5', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe('extractInboxes', () => {
  const actor = (host: string, name: string, shared: boolean) => ({
    id: new URL(`https://${host}/users/${name}`),
    inboxId: new URL(`https://${host}/users/${name}/inbox`),
    endpoints: shared ? { sharedInbox: new URL(`https://${host}/inbox`) } : null,
  });
  const recipients = [actor('a.test', 'x', true), actor('a.test', 'y', true), actor('b.test', 'z', false), { id: new URL('https://c.test/u'), inboxId: null, endpoints: null }];

  it('gives each shared inbox once, with the actors it stands for, when shared inboxes are preferred', () => {
    expect(extractInboxes(recipients, true)).toEqual({
      'https://a.test/inbox': { actors: ['https://a.test/users/x', 'https://a.test/users/y'], shared: true },
      'https://b.test/users/z/inbox': { actors: ['https://b.test/users/z'], shared: false },
    });
  });

  it('uses personal inboxes otherwise', () => {
    expect(Object.keys(extractInboxes(recipients, false))).toEqual([
      'https://a.test/users/x/inbox',
      'https://a.test/users/y/inbox',
      'https://b.test/users/z/inbox',
    ]);
  });
});

describe('interleaveByHost', () => {
  it('takes the hosts in turn, keeping each host\'s order', () => {
    const list = ['https://a.test/1', 'https://a.test/2', 'https://a.test/3', 'https://b.test/1', 'https://c.test/1', 'https://c.test/2'];
    interleaveByHost(list);
    expect(list).toEqual(['https://a.test/1', 'https://b.test/1', 'https://c.test/1', 'https://a.test/2', 'https://c.test/2', 'https://a.test/3']);
  });
});
