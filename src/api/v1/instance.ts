/** GET /api/v1/instance and its sub-resources. Unauthenticated, as on Mastodon. */
import type { Router } from '../../http/index.ts';
import { json, jsonText } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { instanceView as instanceRows, instanceActivity, instancePeers, type ContactAccount } from '../../services/instance.ts';
import { serializeAccount, type MastodonAccount } from '../../serializers/account.ts';
import {
  serializeInstanceV1,
  serializeExtendedDescription,
  serializePrivacyPolicy,
  serializeRules,
  serializeInstanceActivity,
  serializeInstancePeers,
  serializeInstanceLanguages,
  type InstanceView,
} from '../../serializers/instance.ts';

const presented = new WeakMap<InstanceView<ContactAccount>, InstanceView<MastodonAccount>>();

/**
 * The cached instance view with its contact account serialized: once per view (the service
 * rebuilds the view at most every INSTANCE_VIEW_TTL_MS), so renderedOnce below still renders once.
 */
export async function instanceView(services: Services): Promise<InstanceView<MastodonAccount>> {
  const rows = await instanceRows(services);
  let view = presented.get(rows);
  if (!view) {
    const contact = rows.contact.account;
    view = { ...rows, contact: { ...rows.contact, account: contact ? serializeAccount(contact.account, contact.view) : null } };
    presented.set(rows, view);
  }
  return view;
}

/**
 * The rendered JSON of a cached instance view, made once per view (the view is rebuilt at most
 * every INSTANCE_VIEW_TTL_MS; see services/instance.ts).
 */
export function renderedOnce<V extends object>(render: (view: V) => unknown): (view: V) => string {
  const cache = new WeakMap<V, string>();
  return (view) => {
    let text = cache.get(view);
    if (text === undefined) {
      text = JSON.stringify(render(view));
      cache.set(view, text);
    }
    return text;
  };
}

const renderV1 = renderedOnce(serializeInstanceV1);

export function instanceV1Routes(router: Router, services: Services): void {
  router.get('/api/v1/instance', async () => jsonText(renderV1(await instanceView(services))));
  router.get('/api/v1/instance/extended_description', async () =>
    json(serializeExtendedDescription(await instanceView(services))),
  );
  router.get('/api/v1/instance/privacy_policy', async () => json(serializePrivacyPolicy(await instanceView(services))));
  router.get('/api/v1/instance/rules', async () => json(serializeRules((await instanceView(services)).rules)));
  router.get('/api/v1/instance/peers', async () => json(serializeInstancePeers(await instancePeers(services))));
  router.get('/api/v1/instance/activity', async () =>
    json(serializeInstanceActivity(await instanceActivity(services))),
  );
  router.get('/api/v1/instance/languages', () => json(serializeInstanceLanguages()));
  // Source language → target languages the translation backend offers; Roost has none, so {}
  // (what Mastodon answers without DeepL or LibreTranslate configured).
  router.get('/api/v1/instance/translation_languages', () => json({}));
}
