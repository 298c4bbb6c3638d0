/**
 * The admin dashboard's figures: POST /api/v1/admin/measures, /api/v1/admin/dimensions and
 * /api/v1/admin/retention (Mastodon's Api::V1::Admin::MeasuresController, DimensionsController,
 * RetentionController). A user's token with admin:read and a role that may view the dashboard.
 *
 * As Mastodon: keys it does not know are left out; a key that needs a param (`tag_uses[id]`,
 * `instance_statuses[domain]`) without it is a 400 "param is missing or the value is empty"; an
 * unknown tag is a 404; retention's `frequency` is `day` unless it says `month`. Roost's own
 * refusals, in Mastodon's shape: a missing or unreadable `start_at`/`end_at` (Mastodon fails with a
 * 500 there), and an `end_at` before `start_at` or a period over ten years (422; Mastodon answers
 * empty series to the first).
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramId, paramInt, paramString, paramStrings } from '../../http/index.ts';
import type { ParamValue } from '../../http/params.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { dimension, dimensionParam, measure, measureParam, retention, tagExists, type Period } from '../../services/reads/admin-metrics.ts';

const READ = ['admin:read'];
const DAY_MS = 86_400_000;
const MAX_DAYS = 3660;

/** The UTC day of a date or datetime string (its time ignored, as Mastodon says), or null. */
function day(v: ParamValue | undefined): Date | null | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const s = paramString(v);
  if (s === undefined) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.exec(s.trim());
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (Number.isNaN(d.getTime()) || d.getUTCDate() !== Number(m[3]) || d.getUTCMonth() !== Number(m[2]) - 1) return null;
  return d;
}

function period(ctx: RequestContext, services: Services, required: boolean): Period {
  const today = new Date(Math.floor(services.clock.now().getTime() / DAY_MS) * DAY_MS);
  const read = (name: 'start_at' | 'end_at', fallback: Date): Date => {
    const d = day(ctx.input[name]);
    if (d === undefined) {
      if (required) throw new RoostError(400, `param is missing or the value is empty: ${name}`);
      return fallback;
    }
    if (d === null) throw new RoostError(422, `${name} is not a valid date`);
    return d;
  };
  const end = read('end_at', today);
  const start = read('start_at', new Date(end.getTime() - 29 * DAY_MS));
  if (end.getTime() < start.getTime()) throw new RoostError(422, 'end_at must not be before start_at');
  if ((end.getTime() - start.getTime()) / DAY_MS > MAX_DAYS) throw new RoostError(422, 'The period may not be longer than ten years');
  return { start, end };
}

/** The value of `key[id]` or `key[domain]`; a 400 when it is missing, as Mastodon's params.require. */
async function keyParam(services: Services, ctx: RequestContext, key: string, kind: 'id' | 'domain'): Promise<string> {
  const holder = ctx.input[key];
  const raw = holder && typeof holder === 'object' && !Array.isArray(holder) ? (holder as Record<string, ParamValue>)[kind] : undefined;
  const value = paramString(raw)?.trim();
  if (!value) throw new RoostError(400, `param is missing or the value is empty: ${key}`);
  if (kind === 'domain') return value.toLowerCase();
  const id = paramId(value);
  if (!id || !(await tagExists(services, id))) throw new RoostError(404, 'Record not found');
  return id;
}

export function adminMeasureRoutes(router: Router, services: Services): void {
  router.post('/api/v1/admin/measures', async (ctx) => {
    await requirePermission(services, ctx, READ, 'viewDashboard');
    const p = period(ctx, services, true);
    const out = [];
    for (const key of paramStrings(ctx.input.keys)) {
      const kind = measureParam(key);
      const param = kind ? await keyParam(services, ctx, key, kind) : null;
      const m = await measure(services, key, p, param);
      if (m) out.push(m);
    }
    return json(out);
  });

  router.post('/api/v1/admin/dimensions', async (ctx) => {
    await requirePermission(services, ctx, READ, 'viewDashboard');
    const p = period(ctx, services, false);
    const limit = paramInt(ctx.input.limit, 10, { min: 1, max: 1000 });
    const out = [];
    for (const key of paramStrings(ctx.input.keys)) {
      const kind = dimensionParam(key);
      const param = kind ? await keyParam(services, ctx, key, kind) : null;
      const d = await dimension(services, key, p, limit, param);
      if (d) out.push(d);
    }
    return json(out);
  });

  router.post('/api/v1/admin/retention', async (ctx) => {
    await requirePermission(services, ctx, READ, 'viewDashboard');
    const p = period(ctx, services, true);
    const frequency = paramString(ctx.input.frequency) === 'month' ? 'month' : 'day';
    return json(await retention(services, p, frequency));
  });
}
