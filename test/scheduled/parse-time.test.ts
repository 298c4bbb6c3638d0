/** parseScheduledAt: the ISO 8601 times clients send as `scheduled_at`. */
import { describe, expect, it } from 'vitest';
import { parseScheduledAt } from '../../src/services/scheduled-statuses.ts';

const at = (raw: string) => parseScheduledAt(raw)?.toISOString() ?? null;

describe('parseScheduledAt', () => {
  it.each([
    ['2026-03-01T12:00:00.123Z', '2026-03-01T12:00:00.123Z'],
    ['2026-03-01T12:00:00Z', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T12:00Z', '2026-03-01T12:00:00.000Z'],
    // No offset: UTC, as Ruby's to_datetime reads it (not the server's local time).
    ['2026-03-01T12:00:00', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01 12:00:00', '2026-03-01T12:00:00.000Z'],
    // A bare date: midnight UTC (Mastodon's docs' example).
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T17:30:00.999999+05:30', '2026-03-01T12:00:00.999Z'],
    ['2026-03-01T07:00:00-0500', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T14:00:00+02', '2026-03-01T12:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('%s → %s', (raw, expected) => {
    expect(at(raw)).toBe(expected);
  });

  it.each(['', 'tomorrow', '2026-02-30', '2025-02-29T00:00:00Z', '2026-13-01', '2026-03-01T24:00:00Z', '2026-03-01T12:60:00Z', '2026-03-01T12:00:00+25:00', '1e3', '86400', '2026-03-01T12:00:00Zjunk'])(
    'refuses %j',
    (raw) => {
      expect(parseScheduledAt(raw)).toBeNull();
    },
  );
});
