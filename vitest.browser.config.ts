import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the tests that drive a real Chromium (found by test/browser/find-chromium.ts;
// without one the run stops at once with a message saying what to install or set).
export default defineConfig({
  test: {
    globalSetup: ['test/browser/global-setup.ts', 'test/global-setup.ts'],
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
