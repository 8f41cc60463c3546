import { defineConfig } from 'vitest/config';

// Two projects, as STYLE.md asks: unit tests live beside the code, integration tests (against
// the simulator on port 0) in test/.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'], environment: 'node' } },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
