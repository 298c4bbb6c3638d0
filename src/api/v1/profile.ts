/** DELETE /api/v1/profile/avatar and /api/v1/profile/header: back to the default image; answers the CredentialAccount. */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { removeProfileImage } from '../../services/profiles.ts';
import { credentialAccountJson } from './accounts.ts';

export function profileRoutes(router: Router, services: Services): void {
  for (const kind of ['avatar', 'header'] as const) {
    router.delete(`/api/v1/profile/${kind}`, async (ctx) => {
      const viewer = await requireUser(services, ctx, ['write', 'write:accounts']);
      await removeProfileImage(services, viewer.account.id, kind);
      return json(await credentialAccountJson(services, viewer));
    });
  }
}
