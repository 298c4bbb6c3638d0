import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects; `npm test` (vitest run) runs both.
 *
 *   unit         pure code: machines, the actor runtime, serializers, converters and builders,
 *                small libraries, the architecture test. No database, no server, no global setup:
 *                `npx vitest run --project unit` answers in seconds.
 *   integration  everything else: real servers on real ports, real databases (the global setup
 *                starts the run's PostgreSQL and the template each instance copies), real federation.
 */
const UNIT = [
  'actors/**/*.test.ts',
  'src/**/*.test.ts',
  'test/architecture.test.ts',
  'test/serializers/**/*.test.ts',
  'test/lib/**/*.test.ts',
  'test/snowflake.test.ts',
  'test/config.test.ts',
  'test/http/router.test.ts',
  'test/http/params.test.ts',
  'test/http/multipart.test.ts',
  'test/lab/scenario.test.ts',
  'test/lab/network.test.ts',
  'test/lab/report.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests each start databases and servers; two cores share them.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          globalSetup: ['test/global-setup.ts'],
          include: ['test/**/*.test.ts', 'config/**/*.test.ts'],
          // The real-browser tests need Chromium: `npm run test:browser` (test/browser/vitest.config.ts).
          exclude: [...configDefaults.exclude, ...UNIT, 'test/browser/**'],
        },
      },
    ],
  },
});
