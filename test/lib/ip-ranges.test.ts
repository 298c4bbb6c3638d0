/**
 * IP ranges as IP blocks keep them (lib/ip-ranges.ts) and Mastodon's canonical e-mail address
 * (services/email-blocks.ts canonicalEmail): pure functions, no server.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseIpRange, RangeIndex } from '../../src/lib/ip-ranges.ts';
import { canonicalEmail, canonicalEmailHash } from '../../src/services/email-blocks.ts';

describe('parseIpRange', () => {
  it('reads a bare address as /32 or /128, clears host bits, and maps IPv4-mapped IPv6 to IPv4', () => {
    expect(parseIpRange('8.8.8.8')).toEqual({ cidr: '8.8.8.8/32', kind: 'ipv4', prefix: 32 });
    expect(parseIpRange(' 2001:DB8::1 ')).toEqual({ cidr: '2001:db8::1/128', kind: 'ipv6', prefix: 128 });
    expect(parseIpRange('10.1.2.3/8')).toEqual({ cidr: '10.0.0.0/8', kind: 'ipv4', prefix: 8 });
    expect(parseIpRange('2001:db8:abcd::1/33')).toEqual({ cidr: '2001:db8:8000::/33', kind: 'ipv6', prefix: 33 });
    expect(parseIpRange('::ffff:192.0.2.1')).toEqual({ cidr: '192.0.2.1/32', kind: 'ipv4', prefix: 32 });
    expect(parseIpRange('::ffff:192.0.2.0/120')).toEqual({ cidr: '192.0.2.0/24', kind: 'ipv4', prefix: 24 });
    expect(parseIpRange('0.0.0.0/0')?.cidr).toBe('0.0.0.0/0');
  });

  it('refuses what is not an address or range', () => {
    for (const bad of ['', ' ', '1.2.3.4/33', '::1/129', '256.0.0.1', '1.2.3', 'example.com', '1.2.3.4/-1', '1.2.3.4/8/8', 'x'.repeat(100)]) {
      expect({ bad, range: parseIpRange(bad) }).toEqual({ bad, range: null });
    }
  });
});

describe('RangeIndex', () => {
  it('finds every range containing an address, of its own family, whatever their number', () => {
    const ix = new RangeIndex<string>();
    ix.add(parseIpRange('10.0.0.0/8')!, 'wide');
    ix.add(parseIpRange('10.1.0.0/16')!, 'narrow');
    ix.add(parseIpRange('10.1.2.3')!, 'one');
    ix.add(parseIpRange('2001:db8::/32')!, 'v6');
    for (let i = 0; i < 10_000; i++) ix.add(parseIpRange(`172.16.${i >> 8}.${i & 255}`)!, `n${i}`);
    expect(ix.match('10.1.2.3').sort()).toEqual(['narrow', 'one', 'wide']);
    expect(ix.match('10.2.0.1')).toEqual(['wide']);
    expect(ix.match('::ffff:10.1.9.9').sort()).toEqual(['narrow', 'wide']);
    expect(ix.match('2001:db8:ffff::1')).toEqual(['v6']);
    expect(ix.match('172.16.39.15')).toEqual(['n9999']);
    expect(ix.match('11.0.0.1')).toEqual([]);
    expect(ix.match('not an address')).toEqual([]);
    expect(new RangeIndex<string>().match('10.0.0.1')).toEqual([]);
  });
});

describe('canonicalEmail', () => {
  it('lower-cases, drops dots and a +tag from the local part, as Mastodon does for every domain', () => {
    expect(canonicalEmail('A.B+x@Gmail.com')).toBe('ab@gmail.com');
    expect(canonicalEmail('ab@gmail.com')).toBe('ab@gmail.com');
    expect(canonicalEmail('first.last+news+more@Example.ORG')).toBe('firstlast@example.org');
    expect(canonicalEmailHash('a.b+x@gmail.com')).toBe(createHash('sha256').update('ab@gmail.com').digest('hex'));
  });
});
