/**
 * Metrics → the Prometheus text exposition format (version 0.0.4): `# HELP`, `# TYPE`, then one
 * `name{label="value"} number` line per sample. Pure.
 */

/** What the database tells (services/reads/metrics.ts loadDbMetrics). */
export interface DbMetrics {
  jobs: { queue: string; state: string; count: number }[];
  deliveries: { lane: string; activities: number; inboxes: number; delivered: number; failed: number; pending: number }[];
  hostsOpen: number;
  hostsFailing: number;
  pushSubscriptions: number;
  streamingEvents: number;
}

export interface ProcessMetrics {
  /** Streaming clients connected to this process (null when it serves no streaming). */
  streamingClients: number | null;
  residentBytes: number;
  heapUsedBytes: number;
  uptimeSeconds: number;
}

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escape(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export function serializeMetrics(db: DbMetrics, proc: ProcessMetrics): string {
  const out: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: [Record<string, string>, number][]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [l, v] of samples) out.push(`${name}${labels(l)} ${Number.isFinite(v) ? v : 0}`);
  };
  metric('roost_jobs', 'gauge', 'Jobs in the durable queue, by queue and state (ready, scheduled, running, dead).',
    db.jobs.map((j) => [{ queue: j.queue, state: j.state }, j.count]));
  metric('roost_delivery_activities', 'gauge', 'Outgoing activities whose delivery is tracked, by lane.',
    db.deliveries.map((d) => [{ lane: d.lane }, d.activities]));
  metric('roost_delivery_inboxes', 'gauge', 'Inboxes of the tracked activities, by lane and state (delivered, failed, pending).',
    db.deliveries.flatMap((d) => (['delivered', 'failed', 'pending'] as const).map((state): [Record<string, string>, number] => [{ lane: d.lane, state }, d[state]])));
  metric('roost_delivery_hosts_open', 'gauge', 'Remote hosts the circuit breaker skips until their next probe.', [[{}, db.hostsOpen]]);
  metric('roost_delivery_hosts_failing', 'gauge', 'Remote hosts with recent delivery failures.', [[{}, db.hostsFailing]]);
  metric('roost_push_subscriptions', 'gauge', 'Web Push subscriptions.', [[{}, db.pushSubscriptions]]);
  metric('roost_streaming_events', 'gauge', 'Events held in the streaming event log (the resume buffer).', [[{}, db.streamingEvents]]);
  if (proc.streamingClients !== null) {
    metric('roost_streaming_clients', 'gauge', 'Streaming clients (WebSocket and SSE) connected to this process.', [[{}, proc.streamingClients]]);
  }
  metric('process_resident_memory_bytes', 'gauge', 'Resident memory of this process.', [[{}, proc.residentBytes]]);
  metric('nodejs_heap_used_bytes', 'gauge', 'V8 heap in use in this process.', [[{}, proc.heapUsedBytes]]);
  metric('process_uptime_seconds', 'gauge', 'Seconds since this process started.', [[{}, proc.uptimeSeconds]]);
  return `${out.join('\n')}\n`;
}
