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
    // The engine, the scheduler and the simulator's server are small pieces (CONTRIBUTING.md,
    // src/simulator/ARCHITECTURE.md): a function that outgrows 80 lines is split, not grown.
    // The simulator areas' handler tables (src/simulator/areas/) are not split yet, hence
    // only the server's own files.
    files: ['src/engine/**/*.ts', 'src/scheduler/**/*.ts', 'src/simulator/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test-kit.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
);
