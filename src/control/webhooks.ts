/**
 * `roost webhooks …`: the admin webhooks from the command line (list, create, delete, failures),
 * on the same use cases as the admin API (services/webhooks.ts); the operator acts as nobody's
 * account (the audit log's null actor). Run in the server process or the CLI's (./commands.ts).
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { serializeAdminWebhook, serializeWebhookFailure } from '../serializers/admin-webhook.ts';
import { allWebhooks, createWebhook, deleteWebhook, findWebhook, webhookFailures } from '../services/webhooks.ts';

type Args = Record<string, unknown>;

function id(args: Args): string {
  const v = args.id;
  if (typeof v !== 'string' || !/^\d{1,19}$/.test(v)) throw new RoostError(404, `No webhook ${String(v)}`);
  return v;
}

export const WEBHOOK_COMMANDS = {
  async 'webhooks.list'(services: Services) {
    return { webhooks: (await allWebhooks(services)).map(serializeAdminWebhook) };
  },
  async 'webhooks.create'(services: Services, args: Args) {
    const events = Array.isArray(args.events) ? args.events.filter((e): e is string => typeof e === 'string') : [];
    const url = typeof args.url === 'string' ? args.url : '';
    return { webhook: serializeAdminWebhook(await createWebhook(services, { url, events }, null)) };
  },
  async 'webhooks.delete'(services: Services, args: Args) {
    const row = await deleteWebhook(services, id(args), null).catch((e: unknown) => {
      if (e instanceof RoostError && e.status === 404) throw new RoostError(404, `No webhook ${String(args.id)}`);
      throw e;
    });
    return { webhook: serializeAdminWebhook(row) };
  },
  async 'webhooks.failures'(services: Services, args: Args) {
    const webhookId = args.id === undefined ? null : id(args);
    if (webhookId !== null && !(await findWebhook(services, webhookId))) throw new RoostError(404, `No webhook ${webhookId}`);
    return { failures: (await webhookFailures(services, webhookId, 100)).map(serializeWebhookFailure) };
  },
};
