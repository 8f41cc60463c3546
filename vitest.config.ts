import { defineConfig } from 'vitest/config';

// The suite's secret scan (test/support/leak-scan.ts): the global setup gives every test
// process one temp folder, scanned at the end; the setup file scans what a test deletes and
// the log lines it kept in memory.
const setupFiles = ['test/support/setup.ts'];

// Two projects (CONTRIBUTING.md): unit tests live beside the code, integration tests (against
// the simulator on port 0) in test/.
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'], environment: 'node', setupFiles } },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          setupFiles,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
