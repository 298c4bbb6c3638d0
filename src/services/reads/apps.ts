/** Read module for OAuth applications (GET /api/v1/apps/verify_credentials). */
import type { Services } from '../../context.ts';
import { OAuthApplicationSchema, type OAuthApplication } from '../../db/entities/index.ts';
import { isId } from './page.ts';

export async function applicationById(services: Services, id: string | null): Promise<OAuthApplication | null> {
  if (!id || !isId(id)) return null;
  return services.db.em().findOne(OAuthApplicationSchema, { id });
}
