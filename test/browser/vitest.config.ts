import path from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the tests that drive a real Chromium (found by find-chromium.ts; without
// one the run stops at once with a message saying what to install or set). `npm test` leaves them out.
export default defineConfig({
  root: path.resolve(import.meta.dirname, '../..'),
  test: {
    globalSetup: ['test/browser/global-setup.ts', 'test/global-setup.ts'],
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
