/**
 * Server domains as the instance's domain policy stores and matches them (pure).
 *
 * Normalised the way Mastodon's DomainNormalizable does (Addressable's normalized_host): trimmed,
 * a trailing "/" dropped, lower-cased, IDNA to punycode, one trailing dot dropped. Unlike
 * Mastodon, a port may follow ("localhost:3001"): Roost names a server on a non-default port by
 * host:port (its accounts' `domain` column holds exactly that), and labs and tests run several
 * servers on one host.
 *
 * A domain is valid as Mastodon's DomainValidator has it: shorter than 256 characters, labels of
 * 1–63 characters of [a-z0-9-]; plus an optional :port (1–65535).
 *
 * Matching is Mastodon's wildcard rule: a rule on example.com covers sub.example.com too; the most
 * specific rule wins (DomainBlock.rule_for). A rule without a port covers the host on any port; a
 * rule with a port covers that port only.
 */
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';

const MAX_DOMAIN_LENGTH = 256;
const LABEL_RE = /^[a-z0-9-]{1,63}$/;

/** The normalised domain, or null when it is not a valid domain ("" for blank input). */
export function normalizeDomain(raw: string): string | null {
  let s = raw.trim();
  if (s.endsWith('/')) s = s.slice(0, -1);
  if (s === '') return '';
  let port: string | null = null;
  const m = /^(.*):(\d{1,5})$/.exec(s);
  if (m && !m[1]!.includes(':')) {
    s = m[1]!;
    port = m[2]!;
    const n = Number(port);
    if (n < 1 || n > 65535) return null;
    port = String(n);
  }
  if (/[\s/@?#:\\%]/.test(s) || s.includes('\u0000')) return null;
  let host = domainToASCII(s.toLowerCase());
  if (host === '') return null;
  if (/[^.]\.$/.test(host)) host = host.slice(0, -1);
  if (host.length >= MAX_DOMAIN_LENGTH) return null;
  if (!host.split('.').every((label) => LABEL_RE.test(label))) return null;
  return port === null ? host : `${host}:${port}`;
}

/** Splits "host:port" (the port null when absent). */
export function splitDomain(domain: string): { host: string; port: string | null } {
  const m = /^(.*):(\d+)$/.exec(domain);
  return m ? { host: m[1]!, port: m[2]! } : { host: domain, port: null };
}

/**
 * The rule domains that may cover `domain`, most specific first: sub.example.com:8443 →
 * sub.example.com:8443, example.com:8443, com:8443, sub.example.com, example.com, com. An IP
 * address is matched whole.
 */
export function domainVariants(domain: string): string[] {
  const { host, port } = splitDomain(domain.toLowerCase());
  const labels = host.split('.');
  const hosts = isIP(host) ? [host] : labels.map((_, i) => labels.slice(i).join('.'));
  return port === null ? hosts : [...hosts.map((h) => `${h}:${port}`), ...hosts];
}

/** Whether a rule on `rule` covers `domain` (the domain itself, a subdomain, any port of a port-less rule). */
export function ruleCovers(rule: string, domain: string): boolean {
  return domainVariants(domain).includes(rule);
}

export type DomainSeverity = 'silence' | 'suspend' | 'noop';
export const DOMAIN_SEVERITIES: readonly DomainSeverity[] = ['silence', 'suspend', 'noop'];

export interface DomainBlockRule {
  domain: string;
  severity: DomainSeverity;
  rejectMedia: boolean;
  rejectReports: boolean;
}

/**
 * Mastodon's DomainBlock#stricter_than?: whether `block` limits at least as much as `other` in
 * every respect (a suspension always is).
 */
export function stricterThan(block: DomainBlockRule, other: DomainBlockRule): boolean {
  if (block.severity === 'suspend') return true;
  if (other.severity === 'suspend' && (block.severity === 'silence' || block.severity === 'noop')) return false;
  if (other.severity === 'silence' && block.severity === 'noop') return false;
  return (block.rejectMedia || !other.rejectMedia) && (block.rejectReports || !other.rejectReports);
}

/** The most specific rule among `rules` covering `domain` (Mastodon's rule_for), or null. */
export function ruleFor<R extends { domain: string }>(rules: ReadonlyMap<string, R>, domain: string): R | null {
  for (const v of domainVariants(domain)) {
    const r = rules.get(v);
    if (r) return r;
  }
  return null;
}
