import { defineConfig } from 'vitest/config';

// The suite's secret scan (test/support/leak-scan.ts): the global setup gives every test
// process one temp folder, scanned at the end; the setup file scans what a test deletes and
// the log lines it kept in memory.
const setupFiles = ['test/support/setup.ts'];

/** Tests that run the built CLI or engine (`dist/`, `bin/fleetbook.js`). */
const built = [
  'test/cli/actions.test.ts',
  'test/conformance/simulate-cli.test.ts',
  'test/openapi/dist-layout.test.ts',
  'test/readme.test.ts',
  'test/resume/crash.test.ts',
];
/** Tests that drive a real Chromium (test/browser/): after unit, integration and built ones. */
const browser = ['test/browser/**/*.test.ts'];
/** Tests that rebuild `dist/` (`npm start`): alone, after everything else, so no test runs a half-written dist/. */
const rebuilding = ['test/cli/demo.test.ts'];

const integration = { environment: 'node' as const, setupFiles, testTimeout: 60_000, hookTimeout: 60_000 };

// Projects (CONTRIBUTING.md): unit tests live beside the code, integration tests (against the
// simulator on port 0) in test/, the tests that need a PostgreSQL server in test/postgres/ (a
// throwaway cluster started once for them), the web UI's in a real Chromium in test/browser/.
// Groups run in order: unit and integration together, then the tests of the built CLI, then
// the browser tests, then the one that rebuilds dist/, then postgres.
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'], environment: 'node', setupFiles } },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...built, ...rebuilding, ...browser, 'test/postgres/**'],
          ...integration,
        },
      },
      { test: { name: 'built', include: built, ...integration, sequence: { groupOrder: 1 } } },
      { test: { name: 'browser', include: browser, ...integration, sequence: { groupOrder: 2 } } },
      { test: { name: 'rebuild', include: rebuilding, ...integration, sequence: { groupOrder: 3 } } },
      {
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          ...integration,
          globalSetup: ['test/support/postgres-global-setup.ts'],
          // Last and alone: its workers are real processes timed by claims of a few seconds, and
          // the simulated world runs 3000 times faster than the wall clock (a busy machine's
          // delays become simulated hours: see test/postgres/fixtures/long-prechecks.world.yaml).
          sequence: { groupOrder: 4 },
        },
      },
    ],
  },
});
