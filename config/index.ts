/**
 * Roost's configuration: defaults < optional JSON config file < ROOST_* environment variables.
 * The only module in Roost that reads process.env. Everything is validated once here; a bad
 * value stops the boot with a ConfigError that names the key and the problem.
 */
import { nearestName } from './nearest.ts';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

export type RegistrationsMode = 'open' | 'approval' | 'closed';
export type FederationMode = 'open' | 'allowlist';
/** Who may see the instance's domain blocks (and their reasons): Mastodon's show_domain_blocks settings. */
export type DomainBlocksVisibility = 'disabled' | 'users' | 'all';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'json' | 'pretty';
/** How the SMTP connection is secured: STARTTLS required, TLS from the first byte, or none (a local relay). */
export type SmtpSecurity = 'starttls' | 'tls' | 'none';

/** At most `limit` requests per `periodSeconds` (a fixed window, as Rack::Attack counts). */
export interface RateLimit {
  limit: number;
  periodSeconds: number;
}

export interface InstanceRule {
  text: string;
  hint: string;
}

export interface RoostConfig {
  /** The local domain: the host part of every local account's handle (alice@DOMAIN). */
  domain: string;
  /** Absolute base URL the instance is reached at, without a trailing slash. */
  publicUrl: string;
  host: string;
  port: number;
  /** Where the embedded database, generated secrets and the control socket live. */
  dataDir: string;
  /** A PostgreSQL URL; undefined means the embedded database in dataDir. */
  databaseUrl: string | undefined;
  /** When Roost runs as root: the unprivileged user the embedded PostgreSQL runs as (default: postgres, else nobody). */
  embeddedDatabaseUser: string | undefined;
  /** Connections in the pool on a PostgreSQL server. */
  databasePoolMax: number;
  /**
   * A statement unanswered this many seconds is logged at error level with what is stuck (the
   * pending statements, open transactions, and on a server the holders of locks); 0: off.
   */
  databaseStallSeconds: number;
  /** SIGTERM/SIGINT drain at most this many seconds, then exit, logging what was abandoned. */
  shutdownTimeoutSeconds: number;
  registrations: { mode: RegistrationsMode; message: string | null };
  instance: {
    title: string;
    shortDescription: string;
    description: string;
    contactEmail: string;
    contactUsername: string | null;
    rules: InstanceRule[];
    privacyPolicy: string | null;
    statusPageUrl: string | null;
    /** Where this server's source code can be had (the AGPL asks operators to offer it). */
    sourceUrl: string;
    languages: string[];
    /** GET /api/v1/instance/domain_blocks: nobody (404), signed-in users, or everyone. */
    showDomainBlocks: DomainBlocksVisibility;
    /** Whether that list carries each block's public comment, and for whom. */
    showDomainBlocksRationale: DomainBlocksVisibility;
  };
  federation: {
    mode: FederationMode;
    allowPrivateAddresses: boolean;
    /**
     * Authorized fetch (Mastodon's secure mode): actors, objects and collections are served only
     * to signed GETs from servers the domain policy allows; unsigned ones get 401. The instance
     * actor, WebFinger and NodeInfo stay public. Off by default.
     */
    authorizedFetch: boolean;
    /**
     * Bound on one activity delivery (a POST to a remote inbox): connecting, then the response
     * head, then each gap in its body, each within this many seconds (connecting within at most 5).
     */
    deliveryTimeoutSeconds: number;
    /** POSTs one delivery job has in flight at once (a fan-out to many inboxes). */
    deliveryConcurrency: number;
    /**
     * The per-host circuit breaker of outgoing delivery: a host whose deliveries failed (5xx,
     * no answer) in `circuitFailures` consecutive rounds spanning at least `circuitSpanSeconds`
     * is parked: nothing is sent to it until one probe goes out after `circuitProbeSeconds`
     * (doubling after each failed probe); a success closes the circuit.
     */
    circuitFailures: number;
    circuitSpanSeconds: number;
    circuitProbeSeconds: number;
    /**
     * Bound on resolving one unknown remote mention (`@user@other.example`: WebFinger, then the
     * actor) while a local status is posted or edited; one not resolved in time stays plain text.
     */
    mentionLookupTimeoutSeconds: number;
    /**
     * Fetching a thread's missing replies when it is opened (src/federation/threads.ts): at most
     * this many statuses brought in, collection pages read and levels below the root, within this
     * many seconds, at most `threadFetchHostRate` requests a second to one host, and once per
     * thread per `threadFetchCooldownSeconds`.
     */
    threadFetchMaxStatuses: number;
    threadFetchMaxPages: number;
    threadFetchMaxDepth: number;
    threadFetchTimeoutSeconds: number;
    threadFetchHostRate: number;
    threadFetchCooldownSeconds: number;
    /**
     * Bound on a search that resolves a remote account or status (`resolve=true` with
     * `user@domain` or a URL): WebFinger and the fetches together, in seconds; past it the search
     * answers with what is known here.
     */
    resolveTimeoutSeconds: number;
  };
  /**
   * Machine translation through a LibreTranslate-compatible server (POST /translate, GET
   * /languages): its base URL (null: no translation, POST /api/v1/statuses/:id/translate answers
   * 503) and its API key, if it asks for one.
   */
  translation: { url: string | null; apiKey: string | null };
  /**
   * How long the outbox keeps a fact (table outbox_events, the trace of what happened) once it is
   * older than this many days; facts whose event job is still queued are kept (src/events/retention.ts).
   */
  events: { retentionDays: number };
  /** Blocklist subscriptions (src/services/blocklists.ts): how often each list is fetched again. */
  blocklists: { refreshIntervalSeconds: number };
  /**
   * Reverse proxies (addresses and CIDR ranges) whose X-Forwarded-For names the client: rate
   * limits and recorded addresses use it for requests from these peers only.
   */
  trustedProxies: string[];
  /** Request bodies and uploaded images. */
  bodyLimits: {
    /** Largest body on a route that takes no uploads (JSON, forms), bytes. */
    maxBodyBytes: number;
    /** Largest body on a route that takes image uploads (update_credentials), bytes. */
    maxUploadBytes: number;
    /** A body must be in within this many seconds of the request head. */
    timeoutSeconds: number;
    /**
     * Bytes the bodies of requests nobody has vouched for yet (no user's valid token: the inbox,
     * OAuth apps and tokens, sign-up) may hold together; past it, 503 (src/http/body-budget.ts).
     */
    unauthenticatedBudgetBytes: number;
    /** Such bodies one client address may have arriving at once; past it, 429. */
    concurrentBodiesPerAddress: number;
    /** Largest decoded image, in pixels (width × height). */
    maxImagePixels: number;
  };
  /** Mastodon's published limits (its Rack::Attack configuration), per fixed window. */
  rateLimits: {
    enabled: boolean;
    /**
     * Requests whose client address (after trusted proxies) is loopback are not counted, as
     * Mastodon's Rack::Attack safelist exempts 127.0.0.1 and ::1. A proxy on the same host must be
     * a trusted proxy (the default), or every client it forwards counts as loopback.
     */
    exemptLoopback: boolean;
    /** Every /api request whose token is valid, per user (an app's token: per token). */
    perToken: RateLimit;
    /** Every /api request without a valid token, per IP address. */
    perIp: RateLimit;
    /** Password attempts (the password grant, the sign-in form), per IP address. */
    signIn: RateLimit;
    /** Password attempts per e-mail address or username tried. */
    signInPerLogin: RateLimit;
    /** POST /api/v1/accounts, per IP address. */
    signUp: RateLimit;
    /** Uploads (media, avatar and header), per user. */
    uploads: RateLimit;
  };
  streaming: {
    /** Streaming connections (WebSocket and SSE together) one account may hold open in one process. */
    maxConnectionsPerAccount: number;
  };
  trends: {
    /** Whether /api/v1/trends/* list anything (false: empty lists; the refresh does not run). */
    enabled: boolean;
    /** Whether a tag, status or link trends before an admin reviewed it (Mastodon's trendable_by_default). */
    trendableByDefault: boolean;
    /** How often the scores are computed again, seconds (on the instance's clock). */
    refreshSeconds: number;
  };
  /** Video and audio uploads: the ffmpeg that probes and transcodes them, and its bounds. */
  media: {
    /** An ffmpeg binary; null: the one the @ffmpeg-installer package ships for this platform. */
    ffmpegPath: string | null;
    /** An ffprobe binary; null: the one the @ffprobe-installer package ships. */
    ffprobePath: string | null;
    /** ffmpeg processes one Roost runs at once (transcodes; probes have as many slots of their own). */
    transcodeConcurrency: number;
    /** One ffmpeg run is killed after this many seconds (the upload is then marked failed). */
    transcodeTimeoutSeconds: number;
    /** Address space one ffmpeg or ffprobe process may map, MiB (its RLIMIT_AS); 0: unbounded. */
    transcodeMemoryMb: number;
  };
  pages: {
    /** How long a public page (profile, status, tag) rendered for anonymous visitors is served again from memory, seconds (0: never). */
    cacheSeconds: number;
  };
  logLevel: LogLevel;
  /** What the server accepts and advertises (Mastodon's values; see InstanceLimits). */
  limits: InstanceLimits;
  /** What the loader noticed but does not refuse (an unknown ROOST_* variable); logged at start. */
  warnings: string[];
  /** 'json' or 'pretty'; null: pretty on a terminal, JSON otherwise. */
  logFormat: LogFormat | null;
  /** The bearer token GET /metrics asks for (Prometheus text); null: no metrics served (404). */
  metricsToken: string | null;
  /**
   * Outgoing e-mail (confirmation, password reset, moderation warnings) through an SMTP server;
   * `smtpHost` null: Roost sends no mail (the operator confirms accounts with the CLI).
   */
  mail: {
    smtpHost: string | null;
    smtpPort: number;
    smtpSecurity: SmtpSecurity;
    smtpUser: string | null;
    smtpPassword: string | null;
    /** The From address: `notifications@DOMAIN` unless set. */
    from: string;
  };
}

// --- limits -------------------------------------------------------------------------------------

/**
 * The limits Roost enforces and advertises, in one place: validation (profiles, and statuses,
 * polls and media when they come) and the instance API (serializers/instance.ts) both read
 * `config.limits`, so what the API says is what the server does. The values are Mastodon 4.3's.
 */
export interface InstanceLimits {
  accounts: {
    maxFeaturedTags: number;
    maxPinnedStatuses: number;
    /** Characters. */
    maxDisplayNameLength: number;
    /** Characters as Mastodon counts them (a URL counts 23). */
    maxNoteLength: number;
    maxProfileFields: number;
    profileFieldNameLimit: number;
    profileFieldValueLimit: number;
    /** Bytes of an avatar or header upload (Roost-internal; not in the instance API). */
    profileImageSizeLimit: number;
  };
  statuses: {
    maxCharacters: number;
    maxMediaAttachments: number;
    charactersReservedPerUrl: number;
  };
  mediaAttachments: {
    supportedMimeTypes: readonly string[];
    descriptionLimit: number;
    /** Bytes. */
    imageSizeLimit: number;
    /** Width × height, pixels. */
    imageMatrixLimit: number;
    /** Bytes. */
    videoSizeLimit: number;
    videoFrameRateLimit: number;
    /** Width × height, pixels. */
    videoMatrixLimit: number;
    /** An image's stored original is scaled down to at most this many pixels (Roost-internal; Mastodon's original style). */
    originalMaxPixels: number;
    /** The `small` preview: at most this many pixels (Roost-internal; Mastodon's small style, 640×360). */
    smallMaxPixels: number;
    /** Blurhash components Roost computes for its own media (Roost-internal). */
    blurhashComponents: { x: number; y: number };
    /** Most components per axis accepted in a blurhash from another server (Roost-internal). */
    maxRemoteBlurhashComponents: number;
  };
  polls: {
    maxOptions: number;
    maxCharactersPerOption: number;
    /** Seconds. */
    minExpiration: number;
    /** Seconds. */
    maxExpiration: number;
  };
  /** Mastodon's ScheduledStatus::TOTAL_LIMIT and DAILY_LIMIT (per account; not in the instance API). */
  scheduledStatuses: {
    /** Pending scheduled statuses an account may have. */
    total: number;
    /** Pending scheduled statuses an account may have on one (UTC) day. */
    daily: number;
  };
}

/** The upload types Mastodon 4.3 accepts, in its order. */
export const MASTODON_SUPPORTED_MIME_TYPES: readonly string[] = Object.freeze([
  'image/jpeg', 'image/png', 'image/gif', 'image/heic', 'image/heif', 'image/webp', 'image/avif',
  'video/webm', 'video/mp4', 'video/quicktime', 'video/ogg',
  'audio/wave', 'audio/wav', 'audio/x-wav', 'audio/x-pn-wave', 'audio/vnd.wave', 'audio/ogg', 'audio/vorbis', 'audio/mpeg',
  'audio/mp3', 'audio/webm', 'audio/flac', 'audio/aac', 'audio/m4a', 'audio/x-m4a', 'audio/mp4', 'audio/3gpp',
  'video/x-ms-asf',
]);

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * The upload types Roost accepts: Mastodon's, less HEIC/HEIF. Images are decoded by sharp (AVIF
 * through libheif; HEIC only where libheif has an HEVC decoder, which sharp's prebuilt binaries do
 * not, so it is neither accepted nor advertised); video and audio by ffmpeg (media.ffmpegPath).
 */
export const ROOST_SUPPORTED_MIME_TYPES: readonly string[] = Object.freeze(
  MASTODON_SUPPORTED_MIME_TYPES.filter((t) => t !== 'image/heic' && t !== 'image/heif'),
);

/** Mastodon 4.3's limits (media types: Roost's, above): every instance's `config.limits`. */
export const MASTODON_LIMITS: InstanceLimits = deepFreeze({
  accounts: {
    maxFeaturedTags: 10,
    maxPinnedStatuses: 5,
    maxDisplayNameLength: 30,
    maxNoteLength: 500,
    maxProfileFields: 4,
    profileFieldNameLimit: 255,
    profileFieldValueLimit: 255,
    profileImageSizeLimit: 16 * 1024 * 1024, // 16 MiB
  },
  statuses: {
    maxCharacters: 500,
    maxMediaAttachments: 4,
    charactersReservedPerUrl: 23,
  },
  mediaAttachments: {
    supportedMimeTypes: ROOST_SUPPORTED_MIME_TYPES,
    descriptionLimit: 1500,
    imageSizeLimit: 16 * 1024 * 1024, // 16 MiB
    imageMatrixLimit: 33_177_600, // 7680 × 4320
    videoSizeLimit: 99 * 1024 * 1024, // 99 MiB
    videoFrameRateLimit: 120,
    videoMatrixLimit: 8_294_400, // 3840 × 2160
    originalMaxPixels: 8_294_400, // 3840 × 2160
    smallMaxPixels: 230_400, // 640 × 360
    blurhashComponents: { x: 4, y: 4 },
    maxRemoteBlurhashComponents: 5,
  },
  polls: {
    maxOptions: 4,
    maxCharactersPerOption: 50,
    minExpiration: 300, // 5 minutes
    maxExpiration: 2_629_746, // one average Gregorian month
  },
  scheduledStatuses: {
    total: 300,
    daily: 25,
  },
});

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** One configuration key: its environment variable, its place in the file, and its parser. */
interface KeySpec {
  env: string;
  file: string; // dotted path in the JSON config file
  parse: (raw: unknown, key: string) => unknown;
  default: (partial: Record<string, unknown>) => unknown;
}

function fail(key: string, problem: string): never {
  throw new ConfigError(`Invalid configuration ${key}: ${problem}`);
}

const str =
  (opts: { nonEmpty?: boolean; max?: number } = {}) =>
  (raw: unknown, key: string) => {
    if (typeof raw !== 'string') fail(key, `must be a string, got ${JSON.stringify(raw)}`);
    if (opts.nonEmpty && raw.trim() === '') fail(key, 'must not be empty');
    if (opts.max && raw.length > opts.max) fail(key, `must be at most ${opts.max} characters`);
    return raw;
  };

const nullableStr = (raw: unknown, key: string) => {
  if (raw === null || raw === '') return null;
  return str()(raw, key);
};

const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: unknown, key: string): T => {
    if (typeof raw !== 'string' || !values.includes(raw as T)) {
      fail(key, `must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    }
    return raw as T;
  };

const integer = (min: number, max: number) => (raw: unknown, key: string) => {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    fail(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
};

const bool = (raw: unknown, key: string) => {
  if (typeof raw === 'boolean') return raw;
  if (raw === '1' || raw === 'true' || raw === 'yes' || raw === 'on') return true;
  if (raw === '0' || raw === 'false' || raw === 'no' || raw === 'off' || raw === '') return false;
  fail(key, `must be a boolean (1/0, true/false), got ${JSON.stringify(raw)}`);
};

const domain = (raw: unknown, key: string) => {
  const s = str({ nonEmpty: true })(raw, key).toLowerCase();
  // host or host:port; no scheme, no path.
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/.test(s)) {
    fail(key, `must be a host name, optionally with :port (like example.com), got ${JSON.stringify(raw)}`);
  }
  return s;
};

const httpUrl = (raw: unknown, key: string) => {
  const s = str({ nonEmpty: true })(raw, key);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    fail(key, `must be an absolute URL, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(key, 'must be an http or https URL');
  return s.replace(/\/+$/, '');
};

const nullableHttpUrl = (raw: unknown, key: string) => (raw === null || raw === '' ? null : httpUrl(raw, key));

const pgUrl = (raw: unknown, key: string) => {
  if (raw === null || raw === '' || raw === undefined) return undefined;
  const s = str()(raw, key);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    fail(key, `must be a postgres:// URL, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') fail(key, 'must be a postgres:// or postgresql:// URL');
  return s;
};

const rules = (raw: unknown, key: string): InstanceRule[] => {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      fail(key, 'must be a JSON array of rules (strings or {"text","hint"} objects)');
    }
  }
  if (!Array.isArray(value)) fail(key, 'must be an array of rules');
  return value.map((r, i) => {
    if (typeof r === 'string' && r.trim()) return { text: r, hint: '' };
    if (r && typeof r === 'object' && typeof (r as InstanceRule).text === 'string' && (r as InstanceRule).text.trim()) {
      const hint = (r as InstanceRule).hint ?? '';
      if (typeof hint !== 'string') fail(`${key}[${i}].hint`, 'must be a string');
      return { text: (r as InstanceRule).text, hint };
    }
    return fail(`${key}[${i}]`, 'must be a non-empty string or an object with a non-empty "text"');
  });
};

/** `300/300` (limit/period in seconds) or `{"limit": 300, "periodSeconds": 300}`. */
const rateLimit = (raw: unknown, key: string): RateLimit => {
  let limit: unknown;
  let period: unknown;
  if (typeof raw === 'string') {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
    if (!m) fail(key, `must be LIMIT/SECONDS like 300/300, got ${JSON.stringify(raw)}`);
    [limit, period] = [Number(m[1]), Number(m[2])];
  } else if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    ({ limit, periodSeconds: period } = raw as Record<string, unknown>);
  } else fail(key, `must be LIMIT/SECONDS like 300/300 or {"limit", "periodSeconds"}, got ${JSON.stringify(raw)}`);
  return { limit: integer(1, 1_000_000_000)(limit, `${key} limit`), periodSeconds: integer(1, 86_400 * 7)(period, `${key} period`) };
};

/** Comma-separated (or a JSON array of) IP addresses and CIDR ranges; empty: none. */
const proxyList = (raw: unknown, key: string): string[] => {
  const list = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
  if (!Array.isArray(list)) fail(key, 'must be a comma-separated list of IP addresses or CIDR ranges');
  for (const entry of list) {
    // (config depends on nothing in src: src/lib/client-address.ts parses the same forms)
    if (typeof entry !== 'string' || !(ipaddr.isValidCIDR(entry.trim()) || ipaddr.isValid(entry.trim()))) {
      fail(key, `${JSON.stringify(entry)} is not an IP address or CIDR range`);
    }
  }
  return (list as string[]).map((e) => e.trim());
};

const languages = (raw: unknown, key: string): string[] => {
  const list = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
  if (!Array.isArray(list) || list.length === 0) fail(key, 'must be a non-empty list of ISO 639-1 codes');
  for (const l of list) if (typeof l !== 'string' || !/^[a-z]{2,3}$/.test(l)) fail(key, `${JSON.stringify(l)} is not an ISO 639 code`);
  return list as string[];
};

function isPrivateHost(d: string): boolean {
  const host = d.replace(/:\d+$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.test') || /^(127|10)\.|^192\.168\.|^172\.(1[6-9]|2\d|3[01])\./.test(host);
}

const SPECS: Record<string, KeySpec> = {
  host: { env: 'ROOST_HOST', file: 'host', parse: str({ nonEmpty: true }), default: () => '127.0.0.1' },
  port: { env: 'ROOST_PORT', file: 'port', parse: integer(0, 65535), default: () => 3000 },
  // The identity follows the port: localhost:PORT. Port 0 (any free port, tests and benchmarks)
  // names no port, so it keeps localhost:3000 unless ROOST_DOMAIN says otherwise.
  domain: {
    env: 'ROOST_DOMAIN',
    file: 'domain',
    parse: domain,
    default: (c) => `localhost:${(c.port as number) || 3000}`,
  },
  publicUrl: {
    env: 'ROOST_PUBLIC_URL',
    file: 'publicUrl',
    parse: httpUrl,
    default: (c) => `${isPrivateHost(c.domain as string) ? 'http' : 'https'}://${c.domain}`,
  },
  dataDir: { env: 'ROOST_DATA_DIR', file: 'dataDir', parse: str({ nonEmpty: true }), default: () => './data' },
  databaseUrl: { env: 'ROOST_DATABASE_URL', file: 'databaseUrl', parse: pgUrl, default: () => undefined },
  embeddedDatabaseUser: { env: 'ROOST_EMBEDDED_DB_USER', file: 'embeddedDatabaseUser', parse: str({ nonEmpty: true }), default: () => undefined },
  databasePoolMax: { env: 'ROOST_DATABASE_POOL_MAX', file: 'databasePoolMax', parse: integer(1, 1000), default: () => 10 },
  databaseStallSeconds: { env: 'ROOST_DATABASE_STALL_SECONDS', file: 'databaseStallSeconds', parse: integer(0, 3600), default: () => 10 },
  shutdownTimeoutSeconds: { env: 'ROOST_SHUTDOWN_TIMEOUT_SECONDS', file: 'shutdownTimeoutSeconds', parse: integer(1, 3600), default: () => 10 },
  'registrations.mode': {
    env: 'ROOST_REGISTRATIONS',
    file: 'registrations.mode',
    parse: oneOf<RegistrationsMode>('open', 'approval', 'closed'),
    default: () => 'open',
  },
  'registrations.message': {
    env: 'ROOST_REGISTRATIONS_MESSAGE',
    file: 'registrations.message',
    parse: nullableStr,
    default: () => null,
  },
  'instance.title': { env: 'ROOST_TITLE', file: 'instance.title', parse: str({ nonEmpty: true, max: 200 }), default: () => 'Roost' },
  'instance.shortDescription': {
    env: 'ROOST_SHORT_DESCRIPTION',
    file: 'instance.shortDescription',
    parse: str({ max: 500 }),
    default: () => 'A Roost server: a small corner of the fediverse.',
  },
  'instance.description': { env: 'ROOST_DESCRIPTION', file: 'instance.description', parse: str(), default: () => '' },
  'instance.contactEmail': { env: 'ROOST_CONTACT_EMAIL', file: 'instance.contactEmail', parse: str(), default: () => '' },
  'instance.contactUsername': {
    env: 'ROOST_CONTACT_ACCOUNT',
    file: 'instance.contactUsername',
    parse: nullableStr,
    default: () => null,
  },
  'instance.rules': { env: 'ROOST_RULES', file: 'instance.rules', parse: rules, default: () => [] },
  'instance.privacyPolicy': { env: 'ROOST_PRIVACY_POLICY', file: 'instance.privacyPolicy', parse: nullableStr, default: () => null },
  'instance.statusPageUrl': { env: 'ROOST_STATUS_PAGE_URL', file: 'instance.statusPageUrl', parse: nullableHttpUrl, default: () => null },
  'instance.sourceUrl': {
    env: 'ROOST_SOURCE_URL',
    file: 'instance.sourceUrl',
    parse: httpUrl,
    default: (c) => (c.publicUrl as string),
  },
  'instance.languages': { env: 'ROOST_LANGUAGES', file: 'instance.languages', parse: languages, default: () => ['en'] },
  // Mastodon's defaults (config/settings.yml): the list is not shown.
  'instance.showDomainBlocks': {
    env: 'ROOST_SHOW_DOMAIN_BLOCKS',
    file: 'instance.showDomainBlocks',
    parse: oneOf<DomainBlocksVisibility>('disabled', 'users', 'all'),
    default: () => 'disabled',
  },
  'instance.showDomainBlocksRationale': {
    env: 'ROOST_SHOW_DOMAIN_BLOCKS_RATIONALE',
    file: 'instance.showDomainBlocksRationale',
    parse: oneOf<DomainBlocksVisibility>('disabled', 'users', 'all'),
    default: () => 'disabled',
  },
  'federation.mode': {
    env: 'ROOST_FEDERATION_MODE',
    file: 'federation.mode',
    // 'blocklist' is another name for 'open': every server not suspended by a domain block.
    parse: (raw, key) => {
      const mode = oneOf<FederationMode | 'blocklist'>('open', 'blocklist', 'allowlist')(raw, key);
      return mode === 'blocklist' ? 'open' : mode;
    },
    default: () => 'open',
  },
  'federation.allowPrivateAddresses': {
    env: 'ROOST_ALLOW_PRIVATE_ADDRESSES',
    file: 'federation.allowPrivateAddresses',
    parse: bool,
    default: () => false,
  },
  'federation.authorizedFetch': {
    env: 'ROOST_AUTHORIZED_FETCH',
    file: 'federation.authorizedFetch',
    parse: bool,
    default: () => false,
  },
  'federation.deliveryTimeoutSeconds': {
    env: 'ROOST_DELIVERY_TIMEOUT',
    file: 'federation.deliveryTimeoutSeconds',
    parse: integer(1, 300),
    default: () => 10,
  },
  'federation.deliveryConcurrency': {
    env: 'ROOST_DELIVERY_CONCURRENCY',
    file: 'federation.deliveryConcurrency',
    parse: integer(1, 1024),
    default: () => 64,
  },
  // As Mastodon's DeliveryFailureTracker: a host is down after failures spanning a week.
  'federation.circuitFailures': {
    env: 'ROOST_CIRCUIT_FAILURES',
    file: 'federation.circuitFailures',
    parse: integer(1, 100_000),
    default: () => 10,
  },
  'federation.circuitSpanSeconds': {
    env: 'ROOST_CIRCUIT_SPAN',
    file: 'federation.circuitSpanSeconds',
    parse: integer(0, 90 * 86_400),
    default: () => 7 * 86_400,
  },
  'events.retentionDays': {
    env: 'ROOST_EVENTS_RETENTION_DAYS',
    file: 'events.retentionDays',
    parse: integer(1, 3650),
    default: () => 14,
  },
  'blocklists.refreshIntervalSeconds': {
    env: 'ROOST_BLOCKLIST_REFRESH_INTERVAL',
    file: 'blocklists.refreshIntervalSeconds',
    parse: integer(60, 30 * 86_400),
    default: () => 86_400,
  },
  'federation.circuitProbeSeconds': {
    env: 'ROOST_CIRCUIT_PROBE',
    file: 'federation.circuitProbeSeconds',
    parse: integer(1, 7 * 86_400),
    default: () => 3600,
  },
  'federation.mentionLookupTimeoutSeconds': {
    env: 'ROOST_MENTION_LOOKUP_TIMEOUT',
    file: 'federation.mentionLookupTimeoutSeconds',
    parse: integer(1, 60),
    default: () => 5,
  },
  // As Mastodon 4.5's FetchAllRepliesWorker (1000 statuses, 500 pages, a 15-minute cooldown).
  'federation.threadFetchMaxStatuses': {
    env: 'ROOST_THREAD_FETCH_MAX_STATUSES',
    file: 'federation.threadFetchMaxStatuses',
    parse: integer(0, 100_000),
    default: () => 1000,
  },
  'federation.threadFetchMaxPages': {
    env: 'ROOST_THREAD_FETCH_MAX_PAGES',
    file: 'federation.threadFetchMaxPages',
    parse: integer(0, 100_000),
    default: () => 500,
  },
  'federation.threadFetchMaxDepth': {
    env: 'ROOST_THREAD_FETCH_MAX_DEPTH',
    file: 'federation.threadFetchMaxDepth',
    parse: integer(1, 4096),
    default: () => 100,
  },
  'federation.threadFetchTimeoutSeconds': {
    env: 'ROOST_THREAD_FETCH_TIMEOUT',
    file: 'federation.threadFetchTimeoutSeconds',
    parse: integer(1, 3600),
    default: () => 60,
  },
  'federation.threadFetchHostRate': {
    env: 'ROOST_THREAD_FETCH_HOST_RATE',
    file: 'federation.threadFetchHostRate',
    parse: integer(1, 1000),
    default: () => 5,
  },
  'federation.threadFetchCooldownSeconds': {
    env: 'ROOST_THREAD_FETCH_COOLDOWN',
    file: 'federation.threadFetchCooldownSeconds',
    parse: integer(0, 7 * 86_400),
    default: () => 900,
  },
  'federation.resolveTimeoutSeconds': {
    env: 'ROOST_RESOLVE_TIMEOUT',
    file: 'federation.resolveTimeoutSeconds',
    parse: integer(1, 60),
    default: () => 10,
  },
  'translation.url': { env: 'ROOST_TRANSLATION_URL', file: 'translation.url', parse: nullableHttpUrl, default: () => null },
  'translation.apiKey': { env: 'ROOST_TRANSLATION_API_KEY', file: 'translation.apiKey', parse: nullableStr, default: () => null },
  trustedProxies: {
    env: 'ROOST_TRUSTED_PROXIES',
    file: 'trustedProxies',
    parse: proxyList,
    default: () => ['127.0.0.1', '::1'],
  },
  'bodyLimits.maxBodyBytes': {
    env: 'ROOST_MAX_BODY_BYTES',
    file: 'bodyLimits.maxBodyBytes',
    parse: integer(1024, 1024 ** 3),
    default: () => 1024 * 1024,
  },
  'bodyLimits.maxUploadBytes': {
    env: 'ROOST_MAX_UPLOAD_BYTES',
    file: 'bodyLimits.maxUploadBytes',
    parse: integer(1024, 1024 ** 3),
    // An avatar and a header of 16 MB each, and the form around them.
    default: () => 33 * 1024 * 1024,
  },
  'bodyLimits.timeoutSeconds': {
    env: 'ROOST_BODY_TIMEOUT',
    file: 'bodyLimits.timeoutSeconds',
    parse: integer(1, 3600),
    default: () => 60,
  },
  'bodyLimits.unauthenticatedBudgetBytes': {
    env: 'ROOST_UNAUTHENTICATED_BODY_BUDGET',
    file: 'bodyLimits.unauthenticatedBudgetBytes',
    parse: integer(64 * 1024, 1024 ** 3),
    default: () => 16 * 1024 * 1024,
  },
  'bodyLimits.concurrentBodiesPerAddress': {
    env: 'ROOST_BODIES_PER_ADDRESS',
    file: 'bodyLimits.concurrentBodiesPerAddress',
    parse: integer(1, 100_000),
    default: () => 16,
  },
  'bodyLimits.maxImagePixels': {
    env: 'ROOST_MAX_IMAGE_PIXELS',
    file: 'bodyLimits.maxImagePixels',
    parse: integer(1, 1_000_000_000),
    // Mastodon's MAX_MATRIX_LIMIT: 7680×4320.
    default: () => 33_177_600,
  },
  'rateLimits.enabled': { env: 'ROOST_RATE_LIMITS', file: 'rateLimits.enabled', parse: bool, default: () => true },
  'rateLimits.exemptLoopback': { env: 'ROOST_RATE_LIMITS_EXEMPT_LOOPBACK', file: 'rateLimits.exemptLoopback', parse: bool, default: () => true },
  'rateLimits.perToken': { env: 'ROOST_RATE_LIMIT_PER_TOKEN', file: 'rateLimits.perToken', parse: rateLimit, default: () => ({ limit: 300, periodSeconds: 300 }) },
  'rateLimits.perIp': { env: 'ROOST_RATE_LIMIT_PER_IP', file: 'rateLimits.perIp', parse: rateLimit, default: () => ({ limit: 300, periodSeconds: 300 }) },
  'rateLimits.signIn': { env: 'ROOST_RATE_LIMIT_SIGN_IN', file: 'rateLimits.signIn', parse: rateLimit, default: () => ({ limit: 25, periodSeconds: 300 }) },
  'rateLimits.signInPerLogin': {
    env: 'ROOST_RATE_LIMIT_SIGN_IN_PER_LOGIN',
    file: 'rateLimits.signInPerLogin',
    parse: rateLimit,
    default: () => ({ limit: 25, periodSeconds: 3600 }),
  },
  'rateLimits.signUp': { env: 'ROOST_RATE_LIMIT_SIGN_UP', file: 'rateLimits.signUp', parse: rateLimit, default: () => ({ limit: 5, periodSeconds: 1800 }) },
  'rateLimits.uploads': { env: 'ROOST_RATE_LIMIT_UPLOADS', file: 'rateLimits.uploads', parse: rateLimit, default: () => ({ limit: 30, periodSeconds: 1800 }) },
  'trends.enabled': { env: 'ROOST_TRENDS', file: 'trends.enabled', parse: bool, default: () => true },
  'trends.trendableByDefault': { env: 'ROOST_TRENDABLE_BY_DEFAULT', file: 'trends.trendableByDefault', parse: bool, default: () => false },
  'trends.refreshSeconds': { env: 'ROOST_TRENDS_REFRESH_SECONDS', file: 'trends.refreshSeconds', parse: integer(10, 86_400), default: () => 300 },
  'pages.cacheSeconds': { env: 'ROOST_PAGES_CACHE_SECONDS', file: 'pages.cacheSeconds', parse: integer(0, 3600), default: () => 10 },
  'streaming.maxConnectionsPerAccount': {
    env: 'ROOST_STREAMING_MAX_CONNECTIONS_PER_ACCOUNT',
    file: 'streaming.maxConnectionsPerAccount',
    parse: integer(1, 100_000),
    default: () => 20,
  },
  'media.ffmpegPath': { env: 'ROOST_FFMPEG_PATH', file: 'media.ffmpegPath', parse: nullableStr, default: () => null },
  'media.ffprobePath': { env: 'ROOST_FFPROBE_PATH', file: 'media.ffprobePath', parse: nullableStr, default: () => null },
  'media.transcodeConcurrency': {
    env: 'ROOST_MEDIA_CONCURRENCY',
    file: 'media.transcodeConcurrency',
    parse: integer(1, 64),
    default: () => 1,
  },
  'media.transcodeTimeoutSeconds': {
    env: 'ROOST_MEDIA_TIMEOUT',
    file: 'media.transcodeTimeoutSeconds',
    parse: integer(1, 86_400),
    default: () => 600,
  },
  'media.transcodeMemoryMb': {
    env: 'ROOST_MEDIA_MEMORY_MB',
    file: 'media.transcodeMemoryMb',
    parse: integer(0, 1_048_576),
    default: () => 2048,
  },
  logLevel: {
    env: 'ROOST_LOG_LEVEL',
    file: 'logLevel',
    parse: oneOf<LogLevel>('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    default: () => 'info',
  },
  logFormat: {
    env: 'ROOST_LOG_FORMAT',
    file: 'logFormat',
    parse: (raw, key) => (raw === null || raw === '' ? null : oneOf<LogFormat>('json', 'pretty')(raw, key)),
    default: () => null,
  },
  metricsToken: { env: 'ROOST_METRICS_TOKEN', file: 'metricsToken', parse: nullableStr, default: () => null },
  'mail.smtpHost': { env: 'ROOST_SMTP_HOST', file: 'mail.smtpHost', parse: nullableStr, default: () => null },
  'mail.smtpPort': { env: 'ROOST_SMTP_PORT', file: 'mail.smtpPort', parse: integer(1, 65535), default: () => 587 },
  'mail.smtpSecurity': {
    env: 'ROOST_SMTP_SECURITY',
    file: 'mail.smtpSecurity',
    parse: oneOf<SmtpSecurity>('starttls', 'tls', 'none'),
    default: () => 'starttls',
  },
  'mail.smtpUser': { env: 'ROOST_SMTP_USER', file: 'mail.smtpUser', parse: nullableStr, default: () => null },
  'mail.smtpPassword': { env: 'ROOST_SMTP_PASSWORD', file: 'mail.smtpPassword', parse: nullableStr, default: () => null },
  'mail.from': {
    env: 'ROOST_SMTP_FROM',
    file: 'mail.from',
    parse: str({ nonEmpty: true, max: 320 }),
    default: (c) => `notifications@${String(c.domain).replace(/:\d+$/, '')}`,
  },
};

/** The documented table of keys (README and `roost config` print it). */
export const CONFIG_KEYS = Object.entries(SPECS).map(([key, s]) => ({ key, env: s.env }));

function getPath(obj: unknown, dotted: string): unknown {
  let cur = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) cur = (cur[part] ??= {}) as Record<string, unknown>;
  cur[parts[parts.length - 1]] = value;
}

const FILE_KEYS = new Set(Object.values(SPECS).map((s) => s.file));

function checkUnknownFileKeys(obj: unknown, file: string, prefix = ''): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return;
  for (const [k, v] of Object.entries(obj)) {
    const dotted = prefix ? `${prefix}.${k}` : k;
    if (FILE_KEYS.has(dotted)) continue;
    const children = [...FILE_KEYS].filter((f) => f.startsWith(`${dotted}.`));
    if (children.length === 0) throw new ConfigError(`Invalid configuration file ${file}: unknown key "${dotted}"`);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      const names = [...new Set(children.map((c) => c.slice(dotted.length + 1).split('.')[0]))];
      throw new ConfigError(`Invalid configuration file ${file}: "${dotted}" must be an object with the keys ${names.join(', ')} (got ${JSON.stringify(v)})`);
    }
    checkUnknownFileKeys(v, file, dotted);
  }
}

/** Variables read outside the key table (the config file's path; test and bench switches). */
const OTHER_VARIABLES = new Set(['ROOST_CONFIG', 'ROOST_TEST_DATABASE_URL', 'ROOST_TEST_LOG_LEVEL', 'ROOST_CI_DATABASE_URL', 'ROOST_BENCH_DATABASE_URL', 'ROOST_CHROMIUM', 'ROOST_WEDGE_RUNS']);

/** One warning per `ROOST_*` variable Roost does not know, naming the nearest known one. */
function unknownVariables(env: Env): string[] {
  const known = new Set([...Object.values(SPECS).map((s) => s.env), ...OTHER_VARIABLES]);
  const warnings: string[] = [];
  for (const name of Object.keys(env)) {
    if (!name.startsWith('ROOST_') || known.has(name)) continue;
    const nearest = nearestName(name, known);
    warnings.push(nearest ? `unknown variable ${name} (did you mean ${nearest}?)` : `unknown variable ${name}`);
  }
  return warnings;
}

export interface LoadConfigOptions {
  env?: Env;
  /** A JSON config file; default: ROOST_CONFIG, else ./roost.config.json when it exists. */
  file?: string;
  /** Values that win over everything (tests, the lab); same shape as the file. */
  overrides?: Record<string, unknown>;
  cwd?: string;
}

export function loadConfig(opts: LoadConfigOptions = {}): RoostConfig {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  let fileData: unknown = {};
  const explicitFile = opts.file ?? env.ROOST_CONFIG;
  const file = explicitFile ?? (existsSync(path.join(cwd, 'roost.config.json')) ? 'roost.config.json' : undefined);
  if (file) {
    const p = path.resolve(cwd, file);
    let text: string;
    try {
      text = readFileSync(p, 'utf8');
    } catch (e) {
      throw new ConfigError(`Cannot read configuration file ${p}: ${(e as Error).message}`);
    }
    try {
      fileData = JSON.parse(text);
    } catch (e) {
      throw new ConfigError(`Invalid configuration file ${p}: not JSON (${(e as Error).message})`);
    }
    checkUnknownFileKeys(fileData, p);
  }

  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(SPECS)) {
    const override = opts.overrides ? getPath(opts.overrides, spec.file) : undefined;
    const fromEnv = env[spec.env];
    const fromFile = getPath(fileData, spec.file);
    let value: unknown;
    if (override !== undefined) value = spec.parse(override, key);
    else if (fromEnv !== undefined) value = spec.parse(fromEnv, spec.env);
    else if (fromFile !== undefined) value = spec.parse(fromFile, `${spec.file} (in ${file})`);
    else value = spec.default(out);
    setPath(out, key, value);
  }
  const config = out as unknown as RoostConfig;
  config.warnings = unknownVariables(env);
  config.dataDir = path.resolve(cwd, config.dataDir);
  config.limits = MASTODON_LIMITS;
  return config;
}

/** Whether a host name is a loopback/private address (used for the http default of publicUrl). */
export { isPrivateHost };
