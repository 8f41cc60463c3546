import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { loadPlatformDescription } from '../openapi/description.js';
import { createStepRegistry } from '../steps/registry.js';
import { defaultPlaybookSchema } from './load-playbook.js';
import { createPlaybookAjv } from './playbook-ajv.js';
import { createPlaybookSchema } from './playbook-schema.js';
import { parseSourceDocument } from './source-document.js';
import {
  loadPrecompiledValidator,
  writePrecompiledValidator,
  type PlaybookValidator,
} from './precompiled-validator.js';

const invalidDir = fileURLToPath(new URL('../../test/playbooks/invalid/', import.meta.url));

/** Bad playbooks: the loader's invalid fixtures and a few mistakes of every kind of keyword. */
const badPlaybooks: Array<[string, unknown]> = [
  // Those the loader reads as YAML without a problem: the others are about YAML, not the schema.
  ...readdirSync(invalidDir)
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => parseSourceDocument(name, readFileSync(join(invalidDir, name), 'utf8')))
    .filter((document) => document.problems.length === 0)
    .map((document): [string, unknown] => [document.file, document.data]),
  ['not a mapping', ['a', 'list']],
  ['missing steps, unknown field', { name: 'x', stepz: [] }],
  [
    'wrong types',
    {
      name: 7,
      steps: [
        { id: 'a', sleep: true },
        { id: 'b', call: 'privateCloud.getSystem', with: { id: 5, extra: 1 } },
      ],
    },
  ],
  [
    'bad duration and enum',
    {
      name: 'x',
      defaults: { timeout: 'soon', retry: { jitter: 'some' } },
      steps: [{ id: 'a', log: 'hi', retry: { maxAttempts: -1 } }],
    },
  ],
  [
    'expression where none is taken',
    { name: 'x', steps: [{ id: 'a', forEach: [1], as: '${{ inputs.x }}', steps: [] }] },
  ],
];

describe('the precompiled playbook validator', () => {
  // Beside the package's node_modules: the standalone code requires ajv's runtime helpers by name.
  const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));
  let dir: string;
  const schema = defaultPlaybookSchema();
  let runTime: PlaybookValidator;
  let precompiled: PlaybookValidator | undefined;

  beforeAll(() => {
    mkdirSync(cacheDir, { recursive: true });
    dir = mkdtempSync(join(cacheDir, 'fleetbook-validator-'));
    runTime = createPlaybookAjv().compile(schema);
    writePrecompiledValidator(schema, dir);
    precompiled = loadPrecompiledValidator(schema, dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is found for the schema it was written for', () => {
    expect(precompiled).toBeTypeOf('function');
  });

  it.each(badPlaybooks)('reports what the run-time validator reports: %s', (_name, data) => {
    const validate = precompiled!;
    expect(validate(data)).toBe(runTime(data));
    // Verbose errors: schema, parentSchema and data, which the findings read, are equal too.
    expect(validate.errors).toStrictEqual(runTime.errors);
  });

  it('was compared on playbooks the schema refuses, with verbose errors', () => {
    const accepted = badPlaybooks.filter(([, data]) => precompiled!(data)).map(([name]) => name);
    // These fixtures are wrong only for the semantic rules, after the schema.
    expect(accepted).toEqual([
      'cron-fields.yaml',
      'inferred-cluster-ids.yaml',
      'input-defaults.yaml',
      'reference-order.yaml',
      'requests-device-onboarding.yaml',
      'schedule-inputs.yaml',
      'too-long-durations.yaml',
      'typed-loop-item-path.yaml',
      'typed-misspelt-field.yaml',
      'typed-step-before-it-ran.yaml',
      'typed-wrong-operation.yaml',
      'unknown-names.yaml',
      'uses-inputs.yaml',
    ]);
    precompiled!(badPlaybooks.at(-1)![1]);
    expect(
      precompiled!.errors?.every(
        (error) => error.schema !== undefined && error.parentSchema !== undefined && 'data' in error,
      ),
    ).toBe(true);
  });

  it('accepts the bundled playbooks', () => {
    const bundled = fileURLToPath(new URL('../../playbooks/', import.meta.url));
    for (const name of readdirSync(bundled))
      expect(precompiled!(parseDocument(readFileSync(join(bundled, name), 'utf8')).toJS()), name).toBe(true);
  });

  it('serves no other schema, and a new build replaces the file of the old schema', () => {
    const registry = createStepRegistry();
    const other = createPlaybookSchema(registry, loadPlatformDescription());
    expect(other).toStrictEqual(schema);
    expect(loadPrecompiledValidator(other, dir)).toBeTypeOf('function');
    const changed = { ...schema, title: 'changed' };
    expect(loadPrecompiledValidator(changed, dir)).toBeUndefined();
    writePrecompiledValidator(changed, dir);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(loadPrecompiledValidator(schema, dir)).toBeUndefined();
  });

  it('is not found where the build wrote none (the sources under vitest compile at run time)', () => {
    expect(loadPrecompiledValidator(schema)).toBeUndefined();
  });
});
