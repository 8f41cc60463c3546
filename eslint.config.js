// Lint: no floating promises, type-only imports marked. The import rules of docs/architecture.md
// (no cycles, layers pointing one way) are checked by dependency-cruiser: .dependency-cruiser.cjs.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'src/api/generated/', 'bin/', '.fleetbook/'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A function that outgrows 80 lines is split into named pieces, not grown (CONTRIBUTING.md).
    files: ['src/**/*.ts'],
    ignores: [
      '**/*.test.ts',
      '**/*.test-kit.ts',
      // The simulator areas' handler tables (one entry per operation): exempt by decision.
      'src/simulator/areas/**',
      '!src/simulator/areas/private-cloud/view-cache.ts',
    ],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
);
