import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts', 'actors/**/*.test.ts', 'src/**/*.test.ts', 'config/**/*.test.ts'],
    // The real-browser tests need Chromium: `npm run test:browser` (test/browser/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests each start databases and servers; two cores share them.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
