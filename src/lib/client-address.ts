/**
 * The client's address behind a reverse proxy, the way Rails' remote_ip finds it: the peer's
 * address unless the peer is a trusted proxy; from a trusted proxy, the right-most address of
 * X-Forwarded-For that is not itself a trusted proxy (each proxy appends the address it saw, so
 * everything left of the first untrusted hop may be forged by the client). A forged header from an
 * untrusted peer is ignored. Addresses are compared after ipaddr.js's `process` (an IPv4-mapped
 * IPv6 address counts as its IPv4 form).
 */
import ipaddr from 'ipaddr.js';

export type TrustedProxies = (address: string) => boolean;

/** Parses `127.0.0.1`, `::1`, `10.0.0.0/8`… (throws on anything else). */
export function parseProxyRange(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const s = entry.trim();
  if (ipaddr.isValidCIDR(s)) {
    const [addr, bits] = ipaddr.parseCIDR(s);
    // 10.0.0.0/8 written as ::ffff:10.0.0.0/104 still matches IPv4 peers.
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [addr, bits];
  }
  if (ipaddr.isValid(s)) {
    const addr = ipaddr.process(s);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  }
  throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
}

function parseAddress(s: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const t = s.trim();
  return ipaddr.isValid(t) ? ipaddr.process(t) : null;
}

/** A matcher for a list of addresses and CIDR ranges. */
export function trustedProxies(list: readonly string[]): TrustedProxies {
  const ranges = list.map(parseProxyRange);
  if (ranges.length === 0) return () => false;
  return (address) => {
    const addr = parseAddress(address);
    if (!addr) return false;
    return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  };
}

/** The normal text form of an address (uWS may give IPv4 peers as ::ffff:a.b.c.d). */
function normal(address: string): string {
  const addr = parseAddress(address);
  return addr ? addr.toString() : address;
}

/** The client address of a request from `peer` carrying `forwardedFor` (X-Forwarded-For). */
export function clientAddress(peer: string, forwardedFor: string | null, trusted: TrustedProxies): string {
  if (!forwardedFor || !trusted(peer)) return normal(peer);
  const hops = forwardedFor
    .split(',')
    .map(parseAddress)
    .filter((a): a is ipaddr.IPv4 | ipaddr.IPv6 => a !== null)
    .map((a) => a.toString());
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i]!)) return hops[i]!;
  // Every hop is a proxy of ours: the left-most is the nearest thing to a client.
  return hops[0] ?? normal(peer);
}

/** Whether a (resolved) client address is loopback: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x. */
export function isLoopback(address: string): boolean {
  const addr = parseAddress(address);
  return addr !== null && addr.range() === 'loopback';
}
