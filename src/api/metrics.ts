/**
 * GET /metrics: Prometheus text for operators and the federation lab — the job queue, outgoing
 * deliveries by lane, the circuit breaker's hosts, Web Push subscriptions, the streaming event log
 * (all shared by the processes on one database, read in one statement), and this process's
 * streaming clients and memory. Served only when `metricsToken` is configured, to a scraper that
 * sends it as a bearer token (compared in constant time); otherwise 404, as if absent. Not under
 * /api: the rate limits and CORS of the client API do not apply to it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Router } from '../http/index.ts';
import type { Services } from '../context.ts';
import { loadDbMetrics } from '../services/reads/metrics.ts';
import { serializeMetrics } from '../serializers/metrics.ts';
import { streamingHubOf } from '../streaming/hub.ts';

const digest = (v: string) => createHash('sha256').update(v).digest();

export function metricsRoutes(router: Router, services: Services): void {
  router.get('/metrics', async (ctx) => {
    const token = services.config.metricsToken;
    if (token === null) return Response.json({ error: 'Not found' }, { status: 404 });
    const given = /^Bearer\s+(.+)$/i.exec(ctx.headers.get('authorization') ?? '')?.[1]?.trim() ?? '';
    if (!timingSafeEqual(digest(given), digest(token))) {
      return Response.json({ error: 'The access token is invalid' }, { status: 401, headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    const db = await loadDbMetrics(services);
    const memory = process.memoryUsage();
    const body = serializeMetrics(db, {
      streamingClients: streamingHubOf(services)?.clients.size ?? null,
      residentBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      uptimeSeconds: Math.round(process.uptime()),
    });
    return new Response(body, { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } });
  });
}
