/** Levenshtein distance: insertions, deletions and substitutions, each 1. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known name closest to a mistyped one (`ROOST_PORTT` → `ROOST_PORT`, `acounts` →
 * `accounts`), or null when none is close enough to be a likely typo.
 */
export function nearestName(name: string, known: Iterable<string>): string | null {
  let nearest: string | null = null;
  let best = Infinity;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < best) [nearest, best] = [k, d];
  }
  return best <= Math.max(2, Math.floor(name.length / 4)) ? nearest : null;
}
