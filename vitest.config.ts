import { defineConfig } from 'vitest/config';

// The suite's secret scan (test/support/leak-scan.ts): the global setup gives every test
// process one temp folder, scanned at the end; the setup file scans what a test deletes and
// the log lines it kept in memory.
const setupFiles = ['test/support/setup.ts'];

// Three projects: unit tests live beside the code (STYLE.md), integration tests (against the
// simulator on port 0) in test/, and the tests that need a PostgreSQL server in test/postgres/
// (their own project, with a throwaway cluster started once for them, so `unit` stays fast).
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'], environment: 'node', setupFiles } },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/postgres/**'],
          environment: 'node',
          setupFiles,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/postgres-global-setup.ts'],
          setupFiles,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
