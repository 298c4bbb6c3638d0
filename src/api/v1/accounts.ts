/**
 * /api/v1/accounts: sign-up (POST), several profiles (GET ?id[]=), verify_credentials, update_credentials (PATCH and PUT; JSON,
 * urlencoded with Rails nested keys, multipart with avatar/header files), lookup, search, and
 * GET /api/v1/accounts/:id. The other /api/v1/accounts/:id/… routes live in api/v1/accounts/.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramArray, paramBool, paramInt, paramString, paramStrings, type Params, type ParamValue } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireToken, requireUser, type UserViewer } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { registerAccount } from '../../services/registrations.ts';
import { lookupProfile, searchProfiles, updateProfile } from '../../services/profiles.ts';
import { accountView } from '../../services/account-views.ts';
import { loadCredentialAccount } from '../../services/reads/credentials.ts';
import { renderAccount, renderAccounts } from '../../views/accounts.ts';
import { serializeAccount } from '../../serializers/account.ts';
import { serializeCredentialAccount } from '../../serializers/credential-account.ts';
import { lookupRemoteAccount } from '../../federation/lookup.ts';
import type { RoostFederation } from '../../federation/index.ts';
import type { Account } from '../../db/entities/index.ts';

const READ_ACCOUNTS = ['read', 'read:accounts'];
const WRITE_ACCOUNTS = ['write', 'write:accounts'];
/** Mastodon's DEFAULT_ACCOUNTS_LIMIT for GET /api/v1/accounts. */
const MAX_ACCOUNTS_PER_REQUEST = 40;

/** The signed-in user's CredentialAccount (also what api/v1/profile.ts answers). */
export async function credentialAccountJson(services: Services, viewer: UserViewer) {
  const d = await loadCredentialAccount(services, viewer.account.id);
  return serializeCredentialAccount(d.account, d.user, d.role, d.view, d.followRequestsCount);
}

async function accountJson(services: Services, account: Account | null) {
  if (!account) throw new RoostError(404, 'Record not found');
  return json(serializeAccount(account, await accountView(services, [account])));
}

/** `fields_attributes` as an array (JSON), or a hash keyed by index (forms; the HTTP layer makes small indexes an array). */
function fieldsParam(value: ParamValue | undefined): { name: string; value: string }[] | undefined {
  if (value === undefined || value === null) return undefined;
  return paramArray(value)
    .filter((f): f is Params => !!f && typeof f === 'object' && !Array.isArray(f))
    .map((f) => ({ name: paramString(f.name) ?? '', value: paramString(f.value) ?? '' }));
}

export function accountRoutes(router: Router, services: Services, federation?: RoostFederation): void {
  router.post('/api/v1/accounts', async (ctx) => {
    const viewer = await requireToken(services, ctx, WRITE_ACCOUNTS);
    if (viewer.user) throw new RoostError(403, 'This method requires an client credentials authentication');
    const token = await registerAccount(
      services,
      { applicationId: viewer.token.applicationId ?? null, tokenScopes: viewer.scopes, ip: ctx.remoteAddress },
      {
        username: paramString(ctx.input.username),
        email: paramString(ctx.input.email),
        password: paramString(ctx.input.password),
        agreement: paramBool(ctx.input.agreement),
        locale: paramString(ctx.input.locale),
        reason: paramString(ctx.input.reason),
        dateOfBirth: paramString(ctx.input.date_of_birth),
      },
    );
    return json(token);
  });

  // Several profiles at once (Mastodon 4.3): the visible ones, in the order asked.
  router.get('/api/v1/accounts', async (ctx) => {
    await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
    const ids = paramStrings(ctx.input.id);
    if (ids.length > MAX_ACCOUNTS_PER_REQUEST) throw new RoostError(422, `Too many accounts requested (maximum is ${MAX_ACCOUNTS_PER_REQUEST})`);
    return json(await renderAccounts(services, [...new Set(ids)], { visibleOnly: true }));
  });

  router.get('/api/v1/accounts/verify_credentials', async (ctx) => {
    const viewer = await requireUser(services, ctx, [...READ_ACCOUNTS, 'profile'], { allowUnconfirmed: true });
    return json(await credentialAccountJson(services, viewer));
  });

  router.update('/api/v1/accounts/update_credentials', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_ACCOUNTS);
    const input = ctx.input;
    const source = (input.source && typeof input.source === 'object' && !Array.isArray(input.source) ? input.source : {}) as Params;
    const file = (name: string) => {
      const f = ctx.files[name];
      return Array.isArray(f) ? f[0] : f;
    };
    await updateProfile(services, viewer.account.id, viewer.user.id, {
      displayName: paramString(input.display_name),
      note: paramString(input.note),
      locked: paramBool(input.locked),
      bot: paramBool(input.bot),
      discoverable: paramBool(input.discoverable),
      indexable: paramBool(input.indexable),
      hideCollections: paramBool(input.hide_collections),
      fields: fieldsParam(input.fields_attributes),
      source: {
        privacy: paramString(source.privacy),
        sensitive: paramBool(source.sensitive),
        language: source.language === undefined ? undefined : (paramString(source.language) ?? null),
        quotePolicy: paramString(source.quote_policy),
      },
      avatar: file('avatar'),
      header: file('header'),
    });
    return json(await credentialAccountJson(services, viewer));
  }, {
    // Images come with it: a larger body, and only from a valid token (checked before the upload is read).
    maxBodyBytes: services.config.bodyLimits.maxUploadBytes,
    beforeBody: async (ctx) => void (await requireUser(services, ctx, WRITE_ACCOUNTS)),
  });

  router.get('/api/v1/accounts/lookup', async (ctx) => {
    await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
    return accountJson(services, await lookupProfile(services, paramString(ctx.query.acct) ?? ''));
  });

  router.get('/api/v1/accounts/search', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_ACCOUNTS);
    const q = (paramString(ctx.query.q) ?? '').trim().replace(/^@/, '');
    // resolve=true with a full remote handle fetches the account first (WebFinger + actor).
    const handle = /^[^@\s]+@([^@\s]+)$/.exec(q);
    if (paramBool(ctx.query.resolve) && federation && handle && handle[1]!.toLowerCase() !== services.config.domain.toLowerCase()) {
      await lookupRemoteAccount(services, federation, q).catch(() => null);
    }
    const accounts = await searchProfiles(services, viewer.account.id, {
      q,
      limit: paramInt(ctx.query.limit, 40, { min: 1, max: 80 }),
      offset: paramInt(ctx.query.offset, 0, { min: 0 }),
      following: paramBool(ctx.query.following, false),
    });
    const view = await accountView(services, accounts);
    return json(accounts.map((a) => serializeAccount(a, view)));
  });

  router.get('/api/v1/accounts/:id', async (ctx) => {
    await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
    const account = await renderAccount(services, ctx.params.id, { visibleOnly: true });
    if (!account) throw new RoostError(404, 'Record not found');
    return json(account);
  });
}
