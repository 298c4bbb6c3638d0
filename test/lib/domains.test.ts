/** Domains as the domain policy normalises and matches them, and the policy snapshot's answers. */
import { describe, expect, it, vi } from 'vitest';
import { domainVariants, normalizeDomain, ruleCovers, stricterThan, type DomainBlockRule } from '../../src/lib/domains.ts';
import { createDomainPolicy, DomainPolicySnapshot, POLICY_TTL_MS } from '../../src/services/domain-policy.ts';
import { fedifyMessageAllowed } from '../../src/federation/outbound-policy.ts';
import { loadConfig } from '../../config/index.ts';

describe('normalizeDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM.  ', 'example.com'],
    ['example.com/', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['XN--BCHER-KVA.example', 'xn--bcher-kva.example'],
    ['localhost:3001', 'localhost:3001'],
    ['127.0.0.1:08080', '127.0.0.1:8080'],
    ['a-b.c0', 'a-b.c0'],
    ['', ''],
    ['   ', ''],
  ])('%j → %j', (raw, out) => {
    expect(normalizeDomain(raw)).toBe(out);
  });

  it.each([
    'exa mple.com',
    'https://example.com',
    'example.com/path',
    'user@example.com',
    'under_score.example',
    'a..example',
    '.example',
    `${'a'.repeat(64)}.example`,
    `${'abcdefghi.'.repeat(26)}com`,
    'example.com:0',
    'example.com:65536',
    'example.com:',
    '[::1]:80',
    'a\u0000b.example',
    'ex\u202Eample.com',
    '*.example.com',
  ])('refuses %j', (raw) => {
    expect(normalizeDomain(raw)).toBeNull();
  });
});

describe('matching', () => {
  it('covers subdomains, and every port of a port-less rule', () => {
    expect(domainVariants('a.b.example.com')).toEqual(['a.b.example.com', 'b.example.com', 'example.com', 'com']);
    expect(domainVariants('sub.localhost:3001')).toEqual(['sub.localhost:3001', 'localhost:3001', 'sub.localhost', 'localhost']);
    expect(domainVariants('127.0.0.1:3001')).toEqual(['127.0.0.1:3001', '127.0.0.1']);
    expect(ruleCovers('example.com', 'sub.example.com')).toBe(true);
    expect(ruleCovers('example.com', 'badexample.com')).toBe(false);
    expect(ruleCovers('example.com', 'example.com:8443')).toBe(true);
    expect(ruleCovers('example.com:8443', 'example.com')).toBe(false);
    expect(ruleCovers('localhost:3001', 'localhost:3002')).toBe(false);
    expect(ruleCovers('0.0.1', '127.0.0.1')).toBe(false);
  });

  it('stricterThan is Mastodon’s DomainBlock#stricter_than?', () => {
    const r = (severity: DomainBlockRule['severity'], rejectMedia = false, rejectReports = false): DomainBlockRule => ({ domain: 'x', severity, rejectMedia, rejectReports });
    expect(stricterThan(r('suspend'), r('suspend', true, true))).toBe(true);
    expect(stricterThan(r('silence', true, true), r('suspend'))).toBe(false);
    expect(stricterThan(r('noop', true, true), r('silence'))).toBe(false);
    expect(stricterThan(r('silence'), r('silence'))).toBe(true);
    expect(stricterThan(r('silence'), r('noop', true))).toBe(false);
    expect(stricterThan(r('silence', true), r('noop', true))).toBe(true);
    expect(stricterThan(r('noop', false, true), r('noop', false, true))).toBe(true);
  });
});

describe('DomainPolicySnapshot', () => {
  const blocks = [
    { id: '1', domain: 'bad.example', severity: 'suspend' as const, rejectMedia: false, rejectReports: false },
    { id: '2', domain: 'meh.example', severity: 'silence' as const, rejectMedia: true, rejectReports: false },
    { id: '3', domain: 'ok.meh.example', severity: 'noop' as const, rejectMedia: false, rejectReports: false },
  ];

  it('answers from the most specific block', () => {
    const p = new DomainPolicySnapshot({ blocks, allows: [], mode: 'open', localDomain: 'roost.example' });
    expect([p.suspended('x.bad.example'), p.allowed('x.bad.example'), p.rejectMedia('bad.example')]).toEqual([true, false, true]);
    expect([p.silenced('meh.example'), p.rejectMedia('a.meh.example'), p.allowed('meh.example')]).toEqual([true, true, true]);
    expect([p.silenced('ok.meh.example'), p.rejectMedia('ok.meh.example'), p.blockFor('ok.meh.example')?.id]).toEqual([false, false, '3']);
    expect([p.allowed('elsewhere.example'), p.allowedUrl('https://BAD.example/users/x'), p.allowedUrl('not a url')]).toEqual([true, false, false]);
  });

  it('in allowlist mode, talks to allowed servers (and their subdomains) only, never to a suspended one', () => {
    const p = new DomainPolicySnapshot({ blocks, allows: ['friends.example', 'bad.example'], mode: 'allowlist', localDomain: 'roost.example' });
    expect(p.allowed('friends.example')).toBe(true);
    expect(p.allowed('social.friends.example')).toBe(true);
    expect(p.allowed('strangers.example')).toBe(false);
    expect(p.allowed('bad.example')).toBe(false);
    expect(p.allowed('ROOST.example')).toBe(true);
  });
});

describe('fedifyMessageAllowed', () => {
  it('drops queued deliveries to, and inbox work from, servers the policy refuses', () => {
    const p = new DomainPolicySnapshot({
      blocks: [{ id: '1', domain: 'bad.example', severity: 'suspend', rejectMedia: false, rejectReports: false }],
      allows: [],
      mode: 'open',
      localDomain: 'roost.example',
    });
    expect(fedifyMessageAllowed(p, { type: 'outbox', inbox: 'https://x.bad.example/inbox' })).toBe(false);
    expect(fedifyMessageAllowed(p, { type: 'outbox', inbox: 'https://good.example/inbox' })).toBe(true);
    expect(fedifyMessageAllowed(p, { type: 'inbox', activity: { actor: 'https://bad.example/users/x' } })).toBe(false);
    expect(fedifyMessageAllowed(p, { type: 'inbox', activity: { actor: { id: 'https://bad.example/users/x' } } })).toBe(false);
    expect(fedifyMessageAllowed(p, { type: 'inbox', activity: { actor: ['https://bad.example/users/x'] } })).toBe(false);
    expect(fedifyMessageAllowed(p, { type: 'inbox', activity: { actor: 'https://good.example/users/x' } })).toBe(true);
    expect(fedifyMessageAllowed(p, { type: 'fanout', inboxes: {} })).toBe(true);
    expect(fedifyMessageAllowed(p, null)).toBe(true);
  });
});

describe('createDomainPolicy', () => {
  it('reads the tables once per TTL, again at once after invalidate()', async () => {
    vi.useFakeTimers();
    try {
      const seen: string[] = [];
      let blocks = [{ id: '1', domain: 'bad.example', severity: 'suspend', reject_media: false, reject_reports: false }];
      const sql = {
        query: async (text: string) => {
          seen.push(text.includes('instance_domain_blocks') ? 'blocks' : 'allows');
          return (text.includes('instance_domain_blocks') ? blocks : []) as never;
        },
        transaction: async () => {
          throw new Error('unused');
        },
      };
      const policy = createDomainPolicy({ sql }, { mode: 'open', localDomain: 'roost.example' });
      expect(await policy.suspended('bad.example')).toBe(true);
      expect(await policy.allowed('x.bad.example')).toBe(false);
      expect(seen).toEqual(['blocks', 'allows']);
      // Another process changed the tables: seen once the TTL has passed.
      blocks = [];
      vi.advanceTimersByTime(POLICY_TTL_MS - 1);
      expect(await policy.suspended('bad.example')).toBe(true);
      vi.advanceTimersByTime(1);
      expect(await policy.suspended('bad.example')).toBe(false);
      expect(seen).toHaveLength(4);
      // A change made here: read again at once.
      blocks = [{ id: '2', domain: 'meh.example', severity: 'silence', reject_media: true, reject_reports: false }];
      policy.invalidate();
      expect([await policy.silenced('a.meh.example'), await policy.rejectMedia('meh.example')]).toEqual([true, true]);
      expect(seen).toHaveLength(6);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('federation.mode', () => {
  it('is open (also spelt blocklist) by default, or allowlist', () => {
    const mode = (env: Record<string, string>) => loadConfig({ env, cwd: '/nonexistent' }).federation.mode;
    expect(mode({})).toBe('open');
    expect(mode({ ROOST_FEDERATION_MODE: 'blocklist' })).toBe('open');
    expect(mode({ ROOST_FEDERATION_MODE: 'allowlist' })).toBe('allowlist');
    expect(() => mode({ ROOST_FEDERATION_MODE: 'closed' })).toThrow('must be one of open, blocklist, allowlist, got "closed"');
  });
});
