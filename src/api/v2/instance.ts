/** GET /api/v2/instance. Unauthenticated. */
import type { Router } from '../../http/index.ts';
import { jsonText } from '../../http/index.ts';
import { instanceView, renderedOnce } from '../v1/instance.ts';
import type { Services } from '../../context.ts';
import { serializeInstanceV2 } from '../../serializers/instance.ts';

const renderV2 = renderedOnce(serializeInstanceV2);

export function instanceV2Routes(router: Router, services: Services): void {
  router.get('/api/v2/instance', async () => jsonText(renderV2(await instanceView(services))));
}
