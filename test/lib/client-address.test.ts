import { describe, expect, it } from 'vitest';
import { clientAddress, parseProxyRange, trustedProxies } from '../../src/lib/client-address.ts';

describe('clientAddress', () => {
  const loopback = trustedProxies(['127.0.0.1', '::1']);
  const lan = trustedProxies(['10.0.0.0/8', 'fd00::/8', '::ffff:192.168.0.0/112']);

  it('is the peer when the peer is not trusted, whatever the header says', () => {
    expect(clientAddress('198.51.100.1', '203.0.113.5', loopback)).toBe('198.51.100.1');
    expect(clientAddress('198.51.100.1', null, loopback)).toBe('198.51.100.1');
  });

  it('is the right-most untrusted X-Forwarded-For hop from a trusted peer', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.5', loopback)).toBe('203.0.113.5');
    expect(clientAddress('127.0.0.1', '1.1.1.1, 203.0.113.5', loopback)).toBe('203.0.113.5');
    expect(clientAddress('10.1.2.3', '203.0.113.5, 10.0.0.7, 10.9.9.9', lan)).toBe('203.0.113.5');
    expect(clientAddress('fd00::1', '2001:db8::5', lan)).toBe('2001:db8::5');
    expect(clientAddress('192.168.4.4', '203.0.113.8', lan)).toBe('203.0.113.8');
  });

  it('reads IPv4-mapped peers and hops as IPv4', () => {
    expect(clientAddress('::ffff:127.0.0.1', '::ffff:203.0.113.5', loopback)).toBe('203.0.113.5');
    expect(clientAddress('::ffff:198.51.100.1', null, loopback)).toBe('198.51.100.1');
  });

  it('skips what is not an address, and falls back to the left-most hop when every hop is trusted', () => {
    expect(clientAddress('127.0.0.1', 'unknown, 203.0.113.5, <x>', loopback)).toBe('203.0.113.5');
    expect(clientAddress('127.0.0.1', '::1, 127.0.0.1', loopback)).toBe('::1');
    expect(clientAddress('127.0.0.1', 'garbage', loopback)).toBe('127.0.0.1');
  });

  it('trusts nobody with an empty list', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.5', trustedProxies([]))).toBe('127.0.0.1');
  });

  it('refuses entries that are neither addresses nor CIDR ranges', () => {
    expect(() => parseProxyRange('10.0.0.0/33')).toThrow();
    expect(() => parseProxyRange('proxy.local')).toThrow();
    expect(parseProxyRange(' 10.0.0.0/8 ')[1]).toBe(8);
  });
});
