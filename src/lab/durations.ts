/** Durations as scenarios write them: `250ms`, `30s`, `10m`, `2h`, `7d`, or a number of ms. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or null for anything else (negative, unknown unit, not finite). */
export function parseDuration(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(value);
  if (!m) return /^\s*\d+\s*$/.test(value) ? Number(value) : null;
  return Math.round(Number(m[1]) * UNITS[m[2]!]!);
}
