import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The suite's secret scan (test/support/leak-scan.ts): the global setup gives every test
// process one temp folder, scanned at the end; the setup file scans what a test deletes and
// the log lines it kept in memory.
const setupFiles = ['test/support/setup.ts'];

/** Tests that run the built CLI or engine (`dist/`, `bin/fleetbook.js`). */
const built = [
  'test/cli/actions.test.ts',
  // The CLI in processes of their own (test/support/spawn-cli.ts).
  'test/approvals/canary.test.ts',
  'test/approvals/rehearsal-world.test.ts',
  'test/approvals/waits.test.ts',
  'test/cli/daemon.test.ts',
  'test/cli/run.test.ts',
  'test/doors/server-notifications.test.ts',
  'test/engine/sigint.test.ts',
  'test/resume/resume.test.ts',
  'test/server/cli.test.ts',
  'test/notifications/email-step.test.ts',
  'test/notifications/notifications-cli.test.ts',
  'test/conformance/simulate-cli.test.ts',
  'test/openapi/dist-layout.test.ts',
  'test/readme.test.ts',
  'test/resume/crash.test.ts',
];
/** Tests that drive a real Chromium (test/browser/): after unit, integration and built ones. */
const browser = ['test/browser/**/*.test.ts'];
/**
 * Tests that rebuild `dist/` (`npm start`): after every test that runs dist/, so none runs a
 * half-written one; beside the browser tests, which run the sources.
 */
const rebuilding = ['test/cli/demo.test.ts'];

const integration = { environment: 'node' as const, setupFiles, testTimeout: 60_000, hookTimeout: 60_000 };

// Projects (CONTRIBUTING.md): unit tests live beside the code, integration tests (against the
// simulator on port 0) in test/, the tests that need a PostgreSQL server in test/postgres/ (a
// throwaway cluster started once for them), the web UI's in a real Chromium in test/browser/.
// Groups run in order: unit, integration and the tests of the built CLI together (`npm test`
// builds dist/ first; none of them writes it), then the browser tests beside the one that
// rebuilds dist/ (the browser's server runs the sources), then postgres.
export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine, so every file
    // waited on the one before (simulators, child processes and timers, mostly idle CPU).
    maxWorkers: Math.max(3, availableParallelism()),
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
      { test: { name: 'built', include: built, ...integration } },
      { test: { name: 'browser', include: browser, ...integration, sequence: { groupOrder: 2 } } },
      { test: { name: 'rebuild', include: rebuilding, ...integration, sequence: { groupOrder: 2 } } },
      {
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          ...integration,
          globalSetup: ['test/support/postgres-global-setup.ts'],
          // One file at a time, as they were written for (one cluster, claims timed in seconds).
          maxWorkers: 1,
          // Last and alone: its workers are real processes timed by claims of a few seconds, and
          // the simulated world runs 3000 times faster than the wall clock (a busy machine's
          // delays become simulated hours: see test/postgres/fixtures/long-prechecks.world.yaml).
          sequence: { groupOrder: 4 },
        },
      },
    ],
  },
});
