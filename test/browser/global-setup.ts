/** Before anything else in `npm run test:browser`: is there a Chromium? Stop at once if not. */
import { findChromium } from './find-chromium.ts';

export default function setup(): void {
  const file = findChromium();
  process.stdout.write(`[roost tests] browser: ${file}\n`);
}
