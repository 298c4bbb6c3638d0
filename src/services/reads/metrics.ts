/**
 * What GET /metrics reports from the database, in ONE statement: the job queue by queue and state
 * (ready = pending and due, scheduled = pending and due later), outgoing deliveries by lane (the
 * activities still tracked and their inboxes delivered / failed / pending), the hosts the circuit
 * breaker holds open or counts as failing, Web Push subscriptions, and the streaming event log's
 * size. These are shared by every process on the database; what one process holds (its streaming
 * clients, its memory) is added by the route.
 */
import type { Services } from '../../context.ts';
import type { DbMetrics } from '../../serializers/metrics.ts';

export type { DbMetrics };


const rows = <T>(v: T[] | string | null): T[] => (v === null ? [] : typeof v === 'string' ? (JSON.parse(v) as T[]) : v);

export async function loadDbMetrics(services: Services): Promise<DbMetrics> {
  const [r] = await services.db.sql.query<{
    jobs: DbMetrics['jobs'] | string | null;
    deliveries: DbMetrics['deliveries'] | string | null;
    hosts_open: number;
    hosts_failing: number;
    push_subscriptions: number;
    streaming_events: number;
  }>(
    `select
       (select json_agg(json_build_object('queue', queue, 'state', st, 'count', n) order by queue, st)
          from (select queue, case when state = 'pending' and run_at <= $1 then 'ready' when state = 'pending' then 'scheduled' else state end as st,
                       count(*)::int as n
                  from jobs group by 1, 2) j) as jobs,
       (select json_agg(json_build_object('lane', lane, 'activities', a, 'inboxes', i, 'delivered', d, 'failed', f, 'pending', p) order by lane)
          from (select lane, count(*)::int as a, sum(inboxes)::int as i, sum(delivered)::int as d, sum(failed)::int as f, sum(pending)::int as p
                  from deliveries group by lane) x) as deliveries,
       (select count(*)::int from delivery_hosts where open_until > $1) as hosts_open,
       (select count(*)::int from delivery_hosts) as hosts_failing,
       (select count(*)::int from web_push_subscriptions) as push_subscriptions,
       (select count(*)::int from streaming_events) as streaming_events`,
    [services.clock.now()],
  );
  return {
    jobs: rows(r!.jobs),
    deliveries: rows(r!.deliveries),
    hostsOpen: Number(r!.hosts_open),
    hostsFailing: Number(r!.hosts_failing),
    pushSubscriptions: Number(r!.push_subscriptions),
    streamingEvents: Number(r!.streaming_events),
  };
}
