// Lint keeps two promises of DESIGN.md: no floating promises, and imports that point one
// way (no cycles, and the layer rules below).
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Each zone: files in `target` may not import from `from`. Arrows of DESIGN.md, inverted. */
const layerRules = [
  { target: './src/api', from: ['./src/steps', './src/playbook', './src/engine', './src/scheduler', './src/store', './src/cli', './src/simulator', './src/expressions'] },
  { target: './src/steps', from: ['./src/playbook', './src/engine', './src/scheduler', './src/cli', './src/simulator'] },
  { target: './src/playbook', from: ['./src/engine', './src/scheduler', './src/cli', './src/simulator'] },
  { target: './src/expressions', from: ['./src/engine', './src/scheduler', './src/cli', './src/simulator', './src/steps', './src/playbook', './src/api'] },
  { target: './src/store', from: ['./src/engine', './src/scheduler', './src/cli', './src/simulator', './src/steps', './src/playbook', './src/api'] },
  { target: './src/engine', from: ['./src/scheduler', './src/cli', './src/simulator'] },
  { target: './src/scheduler', from: ['./src/cli', './src/simulator'] },
  { target: './src/errors', from: ['./src/api', './src/steps', './src/playbook', './src/engine', './src/scheduler', './src/store', './src/cli', './src/simulator', './src/expressions', './src/logging'] },
  { target: './src/logging', from: ['./src/api', './src/steps', './src/playbook', './src/engine', './src/scheduler', './src/store', './src/cli', './src/simulator', './src/expressions'] },
  // The platform description is a leaf every layer reads.
  { target: './src/openapi', from: ['./src/api', './src/steps', './src/playbook', './src/engine', './src/scheduler', './src/store', './src/cli', './src/simulator', './src/expressions'] },
  // The simulator is a product of its own: only the CLI may use it, and it uses no engine code.
  { target: './src/simulator', from: ['./src/api', './src/steps', './src/playbook', './src/engine', './src/scheduler', './src/store', './src/cli', './src/expressions'] },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'src/api/generated/', 'bin/', '.fleetbook/'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver()],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: layerRules }],
    },
  },
);
