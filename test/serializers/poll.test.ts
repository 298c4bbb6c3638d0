/** serializePoll: a poll's projected row and the viewer's vote → Mastodon's Poll, exactly. */
import { describe, expect, it } from 'vitest';
import { serializePoll, type PollRow } from '../../src/serializers/poll.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const MIN = 60_000;
const at = (ms: number) => new Date(T0 + ms);
const AUTHOR = '100';

/** Multiple choice, totals hidden, ending at +60 min: one voter chose 0 and 1, another 1. */
const HIDDEN: PollRow = {
  id: '7', statusId: '70', accountId: AUTHOR, state: 'open', options: ['yes', 'no', 'maybe'], multiple: true, hideTotals: true,
  expiresAt: at(60 * MIN).toISOString(), votes: [1, 2, 0], votersCount: 2, ownVotes: null,
};
const counts = (json: { options: { votes_count: number | null }[] }) => json.options.map((o) => o.votes_count);

describe('serializePoll', () => {
  it('hides option counts from everyone but the author while open; shows them once expired or ended', () => {
    expect(serializePoll(HIDDEN, AUTHOR, at(2 * MIN), [])).toStrictEqual({
      id: '7', expires_at: '2026-01-01T01:00:00.000Z', expired: false, multiple: true, votes_count: 3, voters_count: 2,
      options: [{ title: 'yes', votes_count: 1 }, { title: 'no', votes_count: 2 }, { title: 'maybe', votes_count: 0 }],
      emojis: [],
      // The author counts as having voted (Mastodon's Poll#voted?).
      voted: true, own_votes: [],
    });
    const voter = serializePoll({ ...HIDDEN, ownVotes: [1, 0] }, '200', at(2 * MIN));
    expect(counts(voter)).toEqual([null, null, null]);
    expect(voter).toMatchObject({ voted: true, own_votes: [0, 1], votes_count: 3, voters_count: 2 });
    const anonymous = serializePoll(HIDDEN, null, at(2 * MIN));
    expect(counts(anonymous)).toEqual([null, null, null]);
    expect('voted' in anonymous || 'own_votes' in anonymous).toBe(false);
    expect(serializePoll(HIDDEN, '300', at(2 * MIN))).toMatchObject({ voted: false, own_votes: [] });

    // Past its end (before the close timer ran), and once closed, everyone sees the counts.
    expect(serializePoll(HIDDEN, null, at(60 * MIN))).toMatchObject({ expired: true, options: [{ votes_count: 1 }, { votes_count: 2 }, { votes_count: 0 }] });
    expect(serializePoll(HIDDEN, null, at(60 * MIN - 1)).expired).toBe(false);
    const closed = serializePoll({ ...HIDDEN, state: 'closed', ownVotes: [1] }, '200', at(3 * MIN));
    expect(closed).toMatchObject({ expired: true, own_votes: [1] });
    expect(counts(closed)).toEqual([1, 2, 0]);
  });

  it('gives voters_count for a single-choice poll too (as Mastodon answers); counts show when totals are not hidden; the emojis as given', () => {
    const single: PollRow = { ...HIDDEN, multiple: false, hideTotals: false, votes: [0, 0, 1], votersCount: 1 };
    const emoji = { shortcode: 'tea', url: 'https://files.example/tea.png', static_url: 'https://files.example/tea.png', visible_in_picker: true };
    expect(serializePoll(single, null, at(0), [emoji])).toStrictEqual({
      id: '7', expires_at: '2026-01-01T01:00:00.000Z', expired: false, multiple: false, votes_count: 1, voters_count: 1,
      options: [{ title: 'yes', votes_count: 0 }, { title: 'no', votes_count: 0 }, { title: 'maybe', votes_count: 1 }],
      emojis: [emoji],
    });
  });

  it('a poll without an end never expires until it is closed', () => {
    const endless: PollRow = { ...HIDDEN, expiresAt: null };
    expect(serializePoll(endless, null, at(10_000 * MIN))).toMatchObject({ expires_at: null, expired: false, options: [{ votes_count: null }, { votes_count: null }, { votes_count: null }] });
    expect(serializePoll({ ...endless, state: 'closed' }, null, at(0)).expired).toBe(true);
  });
});
