/**
 * Rate limits as Mastodon publishes them (its Rack::Attack configuration: 300 requests per
 * 5 minutes per token and per IP, 5 sign-ups per 30 minutes per IP, 25 password attempts per
 * 5 minutes per IP and per hour per login, 30 uploads per 30 minutes), counted by
 * rate-limiter-flexible.
 *
 * On the embedded database the counters live in this process's memory (the embedded database
 * belongs to one process anyway). With a PostgreSQL server the limits that guard secrets and
 * storage (sign-in per IP and per login, sign-up, uploads: few requests each) live in a table on it
 * (`rate_limits`, created on first use), so several Roost processes behind one load balancer share
 * one count; a pool of its own (2 connections) keeps limiter queries off the ORM's pool, and if the
 * server fails to answer the count falls back to memory for that process (an insurance limiter)
 * rather than refusing or letting everything through. The general per-token and per-IP limits
 * (300 per 5 minutes, on every API request) stay in each process's memory: a shared count costs a
 * write per request, measured at a third of the read path's throughput (test/bench/reads), and
 * they shed load rather than guard a secret, so N processes allowing N times as much is the
 * cheaper trade. (Mastodon keeps all of them in Redis.)
 *
 * Whose count a request goes to is Mastodon's too: a token counts once it resolves, under its user
 * (an app's token: under the token), so a made-up bearer string buys nothing and counts under the
 * client address like a request without one ({@link requestBucket}); once that address is over its
 * limit, a bearer string this process has not seen valid is not even looked up
 * ({@link skipsTokenLookup}). A client whose resolved
 * address is loopback is not counted at all (`rateLimits.exemptLoopback`, Mastodon's safelist).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from '../../config/index.ts';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { isLoopback } from '../lib/client-address.ts';
import { isKnownToken, type Viewer } from './reads/viewer.ts';

export type RateLimitRule = 'perToken' | 'perIp' | 'signIn' | 'signInPerLogin' | 'signUp' | 'uploads';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When the window ends. */
  resetAt: Date;
}

/** 429 `{"error":"Too many requests"}` with Retry-After and the X-RateLimit-* headers of the rule that tripped. */
export class TooManyRequests extends RoostError {
  readonly state: RateLimitState;
  constructor(state: RateLimitState, now: number) {
    super(429, 'Too many requests');
    this.state = state;
    this.headers = { ...rateLimitHeaders(state), 'retry-after': String(Math.max(1, Math.ceil((state.resetAt.getTime() - now) / 1000))) };
  }
  readonly headers: Record<string, string>;
}

/** X-RateLimit-Limit/-Remaining/-Reset (an ISO 8601 time, as Mastodon sends it). */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': state.resetAt.toISOString(),
  };
}

export interface RateLimits {
  readonly enabled: boolean;
  /** Whether a request from this (resolved) client address is counted at all: false when limits are off or it is an exempt loopback client. */
  counts(address: string): boolean;
  /** Count one request against `rule` for `key`; throws TooManyRequests past the limit. */
  consume(rule: RateLimitRule, key: string): Promise<RateLimitState>;
  /** Whether `key` has used up `rule` in the current window (nothing counted). */
  exhausted(rule: RateLimitRule, key: string): Promise<boolean>;
}

const RULES: RateLimitRule[] = ['perToken', 'perIp', 'signIn', 'signInPerLogin', 'signUp', 'uploads'];

const byServices = new WeakMap<Services, RateLimits>();

/** The instance's limiters, built on first use from its configuration. */
/** The limits counted across processes (in PostgreSQL) when there is a server. */
const SHARED: ReadonlySet<RateLimitRule> = new Set(['signIn', 'signInPerLogin', 'signUp', 'uploads']);

export function rateLimits(services: Services): RateLimits {
  let limits = byServices.get(services);
  if (limits === undefined) {
    limits = createRateLimits(services);
    byServices.set(services, limits);
  }
  return limits;
}

function createRateLimits(services: Services): RateLimits {
  const config = services.config.rateLimits;
  const enabled = config.enabled;
  let pool: pg.Pool | null = null;
  if (enabled && services.config.databaseUrl) {
    pool = new pg.Pool({ connectionString: services.config.databaseUrl, max: 2, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
    pool.on('error', (err) => services.log.warn({ module: 'rate-limits', error: err.message }, 'rate limit pool error'));
  }
  const limiters = new Map<RateLimitRule, RateLimiterAbstract>();
  // The limiters share one table, made here once (the library would have each of them race to
  // create it, and a lost race is an unhandled rejection).
  let ready: Promise<void> | null = null;
  const tableReady = (): Promise<void> =>
    (ready ??= createTable(pool!).catch((err) => {
      ready = null;
      throw err;
    }));
  for (const rule of RULES) {
    const { limit, periodSeconds } = config[rule] as RateLimit;
    const base = { keyPrefix: rule, points: limit, duration: periodSeconds };
    const memory = new RateLimiterMemory(base);
    limiters.set(
      rule,
      pool === null || !SHARED.has(rule)
        ? memory
        : new RateLimiterPostgres({ ...base, storeClient: pool, tableName: TABLE, tableCreated: true, clearExpiredByTimeout: true, insuranceLimiter: memory }),
    );
  }
  const exemptLoopback = config.exemptLoopback;
  return {
    enabled,
    counts: (address) => enabled && !(exemptLoopback && isLoopback(address)),
    async consume(rule, key) {
      const { limit } = config[rule] as RateLimit;
      if (!enabled) return { limit, remaining: limit, resetAt: new Date(Date.now() + (config[rule] as RateLimit).periodSeconds * 1000) };
      const now = Date.now();
      try {
        if (pool !== null) await tableReady().catch((err) => services.log.warn({ module: 'rate-limits', error: (err as Error).message }, 'rate limit table unavailable'));
        const res = await limiters.get(rule)!.consume(key);
        return { limit, remaining: res.remainingPoints, resetAt: new Date(now + res.msBeforeNext) };
      } catch (err) {
        if (err instanceof RateLimiterRes) throw new TooManyRequests({ limit, remaining: 0, resetAt: new Date(now + err.msBeforeNext) }, now);
        throw err;
      }
    },
    async exhausted(rule, key) {
      if (!enabled) return false;
      const res = await limiters.get(rule)!.get(key).catch(() => null);
      return res !== null && res.consumedPoints >= (config[rule] as RateLimit).limit;
    },
  };
}

const TABLE = 'rate_limits';

/** The table RateLimiterPostgres expects (its own CREATE statement); a concurrent creation by another process is fine. */
async function createTable(pool: pg.Pool): Promise<void> {
  const sql = `create table if not exists ${TABLE} (key varchar(255) primary key, points integer not null default 0, expire bigint)`;
  try {
    await pool.query(sql);
  } catch (err) {
    // Two processes creating it at once: one loses on the type or the index; the table is there.
    if ((err as { code?: string }).code !== '42710' && (err as { code?: string }).code !== '23505' && (err as { code?: string }).code !== '42P07') throw err;
  }
}

/**
 * The general limit a request counts against: its token's user once the token resolved (an app's
 * token, for nobody: the token), else the client address. An unknown or revoked token is no token:
 * however many bearer strings a client makes up, they share its address's one count.
 */
export function requestBucket(viewer: Viewer | null, address: string): [RateLimitRule, string] {
  if (viewer === null) return ['perIp', address];
  if (viewer.user !== null) return ['perToken', `user:${viewer.user.id}`];
  return ['perToken', `token:${viewer.token.id}`];
}

/**
 * Counts one API request that does not pass the router's guard (a WebSocket upgrade) as the guard
 * counts it: under `viewer`'s user or token, else the client address; loopback exempt. Throws
 * TooManyRequests past the limit.
 */
export async function countRequest(services: Services, address: string, viewer: Viewer | null): Promise<void> {
  const limits = rateLimits(services);
  if (!limits.counts(address)) return;
  const [rule, key] = requestBucket(viewer, address);
  await limits.consume(rule, key);
}

/**
 * Whether to count a request's bearer string as no token without looking it up: the client address
 * is already over its general limit and the string is neither in the viewer cache nor a token seen
 * valid lately (reads/viewer.ts isKnownToken). Such a request is a 429 under the address like any
 * anonymous one, so made-up bearer strings from a limited address cost no database lookup (they
 * cost one each up to the limit, as they count against it); a user behind that address whose token
 * this process has seen (or issued) in the last day is still looked up and counted as the user.
 */
export async function skipsTokenLookup(services: Services, address: string, token: string): Promise<boolean> {
  const limits = rateLimits(services);
  if (!limits.counts(address) || isKnownToken(services, token)) return false;
  return limits.exhausted('perIp', address);
}

/** Tokens are counted by their hash: the limiter's table never holds a usable token. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
