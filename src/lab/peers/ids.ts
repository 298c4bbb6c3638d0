/**
 * Identifiers in each software's own format, drawn from the peer's seeded random stream and the lab
 * clock, so a run with the same seed names its objects the same way.
 *
 * - Mastodon: snowflake status ids (milliseconds shifted left 16 bits, low bits a sequence;
 *   Mastodon's Mastodon::Snowflake), and UUIDs for follows.
 * - GoToSocial: ULIDs (48-bit milliseconds, 80 random bits, Crockford base 32).
 * - Misskey: `aid` ids (base-36 milliseconds since 2000-01-01, eight digits, then two random digits).
 * - Pleroma: UUIDv4 for objects, activities and contexts.
 */
type Random = () => number;

function hex(random: Random, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(random() * 16).toString(16);
  return s;
}

export function uuid(random: Random): string {
  const h = hex(random, 32).split('');
  h[12] = '4';
  h[16] = '89ab'[Math.floor(random() * 4)]!;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function ulid(ms: number, random: Random): string {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  let rest = '';
  for (let i = 0; i < 16; i++) rest += CROCKFORD[Math.floor(random() * 32)]!;
  return time + rest;
}

export function snowflake(ms: number, random: Random): string {
  return ((BigInt(ms) << 16n) | BigInt(Math.floor(random() * 65536))).toString();
}

const AID_EPOCH = Date.UTC(2000, 0, 1);

export function aid(ms: number, random: Random): string {
  const time = Math.max(0, ms - AID_EPOCH).toString(36).padStart(8, '0');
  return time + Math.floor(random() * 36).toString(36) + Math.floor(random() * 36).toString(36);
}

/** A short stable token for a string (FNV-1a, base 36): Misskey's follow ids name the followee by its local id. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}
