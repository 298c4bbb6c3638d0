/**
 * /api/v1/push/subscription (Mastodon's methods/push.md): one Web Push subscription per access
 * token, scope `push`, user tokens only. POST replaces the token's subscription; GET and PUT
 * answer 404 "Record not found" without one; DELETE answers {} whether there was one or not (as
 * the documentation and Mastodon's controller do). Alerts are cast as Rails casts booleans
 * ("true", "1", "on" … true; "false", "0", "f", "off" … false).
 */
import type { Router } from '../../../http/index.ts';
import { HttpError, json, paramBool, paramString, type Params, type ParamValue } from '../../../http/index.ts';
import type { Services } from '../../../context.ts';
import { bearer, requireUser } from '../../auth.ts';
import { serializeWebPushSubscription } from '../../../serializers/web-push-subscription.ts';
import {
  ALERT_TYPES,
  createPushSubscription,
  deletePushSubscription,
  requirePushSubscription,
  updatePushSubscription,
  type Alerts,
  type PushData,
} from '../../../push/subscriptions.ts';

const PUSH = ['push'];
const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: ParamValue | undefined): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** `data[alerts][…]` and `data[policy]` (Mastodon's params.expect(data: [:policy, alerts: TYPES])); PUT also takes a top-level `policy`. */
function dataParams(input: Params): PushData {
  const data = isObject(input.data) ? input.data : {};
  const alerts: Alerts = {};
  if (isObject(data.alerts)) {
    for (const type of ALERT_TYPES) {
      const v = data.alerts[type];
      // Unknown types and nested values are dropped, as unpermitted params are.
      if (v !== undefined && isScalar(v)) alerts[type] = paramBool(v) ?? null;
    }
  }
  const rawPolicy = data.policy !== undefined ? data.policy : input.policy;
  const policy = rawPolicy === undefined || rawPolicy === null ? undefined : (paramString(rawPolicy) ?? '');
  return { alerts, policy };
}

export function pushSubscriptionRoutes(router: Router, services: Services): void {
  const render = (sub: Parameters<typeof serializeWebPushSubscription>[0]) => json(serializeWebPushSubscription(sub, services.secrets.vapidPublicKey));

  router.post('/api/v1/push/subscription', async (ctx) => {
    const viewer = await requireUser(services, ctx, PUSH);
    const subscription = ctx.input.subscription;
    if (!isObject(subscription)) throw new HttpError(400, 'param is missing or the value is empty: subscription');
    const keys = isObject(subscription.keys) ? subscription.keys : {};
    const sub = await createPushSubscription(
      services,
      { tokenId: viewer.token.id, userId: viewer.user.id },
      {
        accessToken: bearer(ctx)!,
        endpoint: paramString(subscription.endpoint),
        p256dh: paramString(keys.p256dh),
        auth: paramString(keys.auth),
        standard: isScalar(subscription.standard) ? (paramBool(subscription.standard) ?? false) : false,
        data: dataParams(ctx.input),
      },
    );
    return render(sub);
  });

  router.get('/api/v1/push/subscription', async (ctx) => {
    const viewer = await requireUser(services, ctx, PUSH);
    return render(await requirePushSubscription(services, viewer.token.id));
  });

  router.put('/api/v1/push/subscription', async (ctx) => {
    const viewer = await requireUser(services, ctx, PUSH);
    return render(await updatePushSubscription(services, viewer.token.id, dataParams(ctx.input)));
  });

  router.delete('/api/v1/push/subscription', async (ctx) => {
    const viewer = await requireUser(services, ctx, PUSH);
    await deletePushSubscription(services, viewer.token.id);
    return json({});
  });
}
