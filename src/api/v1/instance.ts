/** GET /api/v1/instance and its sub-resources. Unauthenticated, as on Mastodon. */
import { translationLanguages } from '../../services/translation.ts';
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
  serializeDomainBlocks,
  type InstanceView,
} from '../../serializers/instance.ts';
import { optionalViewer } from '../auth.ts';
import { userFacingDomainBlocks } from '../../services/reads/domain-blocks.ts';
import { RoostError } from '../../lib/errors.ts';

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
  // The moderated servers, as the operator chose to show them (instance.showDomainBlocks):
  // 'disabled' → 404 with an empty body, 'users' → signed-in users only (401 without a valid
  // token), 'all' → everyone. Reasons as instance.showDomainBlocksRationale says.
  router.get('/api/v1/instance/domain_blocks', async (ctx) => {
    const { showDomainBlocks, showDomainBlocksRationale } = services.config.instance;
    if (showDomainBlocks === 'disabled') return new Response(null, { status: 404 });
    const viewer = await optionalViewer(services, ctx);
    const signedIn = viewer?.user != null;
    if (showDomainBlocks === 'users' && !signedIn) throw new RoostError(401, 'The access token is invalid');
    const withComment = showDomainBlocksRationale === 'all' || (showDomainBlocksRationale === 'users' && signedIn);
    const rows = await userFacingDomainBlocks(services);
    const blocks = rows.map((r) => ({ domain: r.domain, severity: r.severity as 'silence' | 'suspend', publicComment: r.public_comment, obfuscate: r.obfuscate }));
    return json(serializeDomainBlocks(blocks, withComment), { headers: { 'cache-control': 'max-age=180, public' } });
  });
  // Source language → target languages the translation server offers (services/translation.ts,
  // kept an hour); {} with none configured or when it does not answer.
  router.get('/api/v1/instance/translation_languages', async () => json(await translationLanguages(services).catch(() => ({}))));
}
