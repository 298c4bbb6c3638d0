/**
 * The instance's domain policy as every layer asks it: is this server suspended, silenced, are its
 * media rejected, may Roost federate with it at all (allowlist mode). One object per instance,
 * `services.domainPolicy`, built in the composition root.
 *
 * It holds a snapshot of the two small tables (instance_domain_blocks, instance_domain_allows),
 * read whole and kept in memory:
 *  - a change made in this process (the admin API, `roost domains …` through the control socket)
 *    calls `invalidate()` after its commit: the next question reads the tables again, so the
 *    change is enforced at once;
 *  - another process sharing the database (web / worker roles on PostgreSQL) re-reads when its
 *    snapshot is older than POLICY_TTL_MS: a change reaches it within that time. (A TTL rather
 *    than LISTEN/NOTIFY: the tables are tiny, a re-read costs one statement, and it needs no
 *    connection of its own.)
 *
 * The TTL is wall time (Date.now), like the viewer cache's: it is a property of this process, and
 * a lab's controllable clock standing still must not pin a stale policy.
 */
import type { Database } from '../db/orm.ts';
import { openTransaction, type Sql } from '../db/sql.ts';
import type { FederationMode } from '../../config/index.ts';
import { domainVariants, ruleFor, type DomainSeverity } from '../lib/domains.ts';

export const POLICY_TTL_MS = 5_000;

export interface PolicyBlock {
  id: string;
  domain: string;
  severity: DomainSeverity;
  rejectMedia: boolean;
  rejectReports: boolean;
}

/** One consistent view of the policy: synchronous questions on an immutable snapshot. */
export class DomainPolicySnapshot {
  readonly blocks: ReadonlyMap<string, PolicyBlock>;
  readonly allows: ReadonlySet<string>;
  readonly mode: FederationMode;
  readonly localDomain: string;
  constructor(opts: { blocks: PolicyBlock[]; allows: string[]; mode: FederationMode; localDomain: string }) {
    this.blocks = new Map(opts.blocks.map((b) => [b.domain, b]));
    this.allows = new Set(opts.allows);
    this.mode = opts.mode;
    this.localDomain = opts.localDomain.toLowerCase();
  }

  /** The most specific block covering `host` (a domain, "host:port" as in URLs), or null. */
  blockFor(host: string): PolicyBlock | null {
    return host ? ruleFor(this.blocks, host.toLowerCase()) : null;
  }

  suspended(host: string): boolean {
    return this.blockFor(host)?.severity === 'suspend';
  }

  silenced(host: string): boolean {
    return this.blockFor(host)?.severity === 'silence';
  }

  rejectMedia(host: string): boolean {
    const b = this.blockFor(host);
    return b !== null && (b.rejectMedia || b.severity === 'suspend');
  }

  rejectReports(host: string): boolean {
    const b = this.blockFor(host);
    return b !== null && (b.rejectReports || b.severity === 'suspend');
  }

  /**
   * Whether Roost talks to `host` at all (inbound and outbound): never to a suspended server; in
   * allowlist mode only to allowed ones (an allow covers subdomains, and cannot override a
   * suspension). The local domain always.
   */
  allowed(host: string): boolean {
    const h = host.toLowerCase();
    if (h === this.localDomain) return true;
    if (this.suspended(h)) return false;
    if (this.mode !== 'allowlist') return true;
    return domainVariants(h).some((v) => this.allows.has(v));
  }

  /** Whether Roost talks to the server of `url` (an absolute URL string or URL; unparsable: no). */
  allowedUrl(url: string | URL): boolean {
    const host = hostOf(url);
    return host !== null && this.allowed(host);
  }
}

/** The host (with its port, if any) of a URL, lower-cased; null when it is not one. */
export function hostOf(url: string | URL): string | null {
  if (url instanceof URL) return url.host.toLowerCase();
  return URL.canParse(url) ? new URL(url).host.toLowerCase() : null;
}

export interface DomainPolicy {
  /** The current snapshot (read again when invalidated or older than POLICY_TTL_MS). */
  snapshot(): Promise<DomainPolicySnapshot>;
  /** Forget the snapshot: the policy tables changed (call after the commit). */
  invalidate(): void;
  suspended(host: string): Promise<boolean>;
  silenced(host: string): Promise<boolean>;
  rejectMedia(host: string): Promise<boolean>;
  allowed(host: string): Promise<boolean>;
}

export function createDomainPolicy(db: Pick<Database, 'sql'>, opts: { mode: FederationMode; localDomain: string }): DomainPolicy {
  let current: { at: number; snapshot: Promise<DomainPolicySnapshot>; settled: boolean } | null = null;
  let generation = 0;
  const load = async (sql: Sql): Promise<DomainPolicySnapshot> => {
    const [blocks, allows] = await Promise.all([
      sql.query<{ id: string; domain: string; severity: DomainSeverity; reject_media: boolean; reject_reports: boolean }>(
        `select id::text as id, domain, severity, reject_media, reject_reports from instance_domain_blocks`,
      ),
      sql.query<{ domain: string }>(`select domain from instance_domain_allows`),
    ]);
    return new DomainPolicySnapshot({
      blocks: blocks.map((b) => ({ id: b.id, domain: b.domain, severity: b.severity, rejectMedia: b.reject_media, rejectReports: b.reject_reports })),
      allows: allows.map((a) => a.domain),
      mode: opts.mode,
      localDomain: opts.localDomain,
    });
  };
  const policy: DomainPolicy = {
    snapshot() {
      const now = Date.now();
      const fresh = current !== null && now - current.at < POLICY_TTL_MS && now >= current.at;
      // Inside a transaction, never wait for the shared read: it may be waiting for the very
      // connection this transaction holds (the embedded database has one session), and the
      // transaction for it. Read the two small tables through the transaction instead.
      const tx = openTransaction();
      if (tx) return fresh && current!.settled ? current!.snapshot : load(tx);
      if (fresh) return current!.snapshot;
      const mine = generation;
      const snapshot = load(db.sql);
      const entry = { at: now, snapshot, settled: false };
      current = entry;
      snapshot.then(
        () => void (entry.settled = true),
        () => {
          if (current === entry && generation === mine) current = null;
        },
      );
      return snapshot;
    },
    invalidate() {
      generation++;
      current = null;
    },
    suspended: async (host) => (await policy.snapshot()).suspended(host),
    silenced: async (host) => (await policy.snapshot()).silenced(host),
    rejectMedia: async (host) => (await policy.snapshot()).rejectMedia(host),
    allowed: async (host) => (await policy.snapshot()).allowed(host),
  };
  return policy;
}
