/**
 * IP ranges as Mastodon's IpBlock keeps them (ipaddr.js does the parsing): a CIDR range with its
 * host bits cleared, a bare address read as /32 or /128, an IPv4-mapped IPv6 address as its IPv4
 * form; and a matcher that answers "which ranges contain this address" by looking up each prefix
 * length present (at most 33 or 129 map lookups), whatever the number of ranges.
 */
import ipaddr from 'ipaddr.js';

export interface IpRange {
  /** `10.0.0.0/8`, `2001:db8::/32`: the canonical text (what the API answers and the row stores). */
  cidr: string;
  kind: 'ipv4' | 'ipv6';
  prefix: number;
}

/** The bits of an address, as a string of 0 and 1 (32 or 128 of them). */
function bitsOf(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  let out = '';
  for (const byte of addr.toByteArray()) out += byte.toString(2).padStart(8, '0');
  return out;
}

/** Parses `1.2.3.4`, `1.2.3.4/24`, `2001:db8::1/64`…; null when it is none of these. */
export function parseIpRange(raw: string): IpRange | null {
  const s = raw.trim();
  if (s === '' || s.length > 64) return null;
  // The address as people write it: four decimal parts, or IPv6 (not inet_aton's `1.2.3` or hex).
  const bare = s.split('/', 1)[0]!;
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !(bare.includes(':') && ipaddr.IPv6.isValid(bare))) return null;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  let prefix: number;
  if (s.includes('/')) {
    if (!/^\d{1,3}$/.test(s.slice(bare.length + 1)) || !ipaddr.isValidCIDR(s)) return null;
    [addr, prefix] = ipaddr.parseCIDR(s);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
      addr = (addr as ipaddr.IPv6).toIPv4Address();
      prefix -= 96;
    }
  } else {
    if (!ipaddr.isValid(s)) return null;
    addr = ipaddr.process(s);
    prefix = addr.kind() === 'ipv4' ? 32 : 128;
  }
  const kind = addr.kind();
  const bits = bitsOf(addr).slice(0, prefix).padEnd(kind === 'ipv4' ? 32 : 128, '0');
  const bytes: number[] = [];
  for (let i = 0; i < bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  const network = ipaddr.fromByteArray(bytes);
  return { cidr: `${network.toString()}/${prefix}`, kind, prefix };
}

/** The bits of a client address (after ipaddr.js's `process`), or null when it is not one. */
export function addressBits(address: string): { kind: 'ipv4' | 'ipv6'; bits: string } | null {
  const s = address.trim();
  if (!ipaddr.isValid(s)) return null;
  const addr = ipaddr.process(s);
  return { kind: addr.kind(), bits: bitsOf(addr) };
}

/** Ranges indexed by kind and prefix: `match(address)` gives every range containing it. */
export class RangeIndex<T> {
  readonly #byPrefix = new Map<string, T[]>();
  readonly #lengths: Record<'ipv4' | 'ipv6', number[]> = { ipv4: [], ipv6: [] };
  size = 0;

  add(range: IpRange, value: T): void {
    const bits = addressBits(range.cidr.slice(0, range.cidr.lastIndexOf('/')))!.bits.slice(0, range.prefix);
    const key = `${range.kind}:${bits}`;
    const list = this.#byPrefix.get(key);
    if (list) list.push(value);
    else this.#byPrefix.set(key, [value]);
    if (!this.#lengths[range.kind].includes(range.prefix)) this.#lengths[range.kind].push(range.prefix);
    this.size++;
  }

  match(address: string): T[] {
    if (this.size === 0) return [];
    const a = addressBits(address);
    if (!a) return [];
    const out: T[] = [];
    for (const len of this.#lengths[a.kind]) {
      const hit = this.#byPrefix.get(`${a.kind}:${a.bits.slice(0, len)}`);
      if (hit) out.push(...hit);
    }
    return out;
  }
}
