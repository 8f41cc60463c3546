/**
 * The platform description is a valid OpenAPI 3.1 document, and every example in it matches
 * its schema (so the examples, which people copy, cannot drift from the shapes).
 */
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// ajv-formats is CommonJS: under NodeNext the default import is the module, whose `default` is the plugin.
const addFormats = formatsModule.default;
const DESCRIPTION = fileURLToPath(new URL('../../schemas/openapi/platform.yaml', import.meta.url));

interface Example {
  pointer: string;
  schema: unknown;
  example: unknown;
}

/** Every object holding both a `schema` and an `example` (media types, parameters, headers). */
function examplesIn(value: unknown, pointer = ''): Example[] {
  if (typeof value !== 'object' || value === null) return [];
  const found: Example[] = [];
  if (!Array.isArray(value) && 'schema' in value && 'example' in value) {
    found.push({ pointer, schema: value.schema, example: value.example });
  }
  for (const [key, child] of Object.entries(value)) found.push(...examplesIn(child, `${pointer}/${key}`));
  return found;
}

describe('platform.yaml', () => {
  it('passes the OpenAPI validator', async () => {
    const result = await validate(DESCRIPTION);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('has examples that validate against their schemas', async () => {
    const document = await dereference(DESCRIPTION);
    expect(examplesIn(document).length).toBeGreaterThanOrEqual(15);
    expect(exampleProblems(document)).toEqual([]);
  });

  it('names an example that does not match its schema', async () => {
    const document: unknown = structuredClone(await dereference(DESCRIPTION));
    const example = at(
      document,
      'paths',
      '/as/token.oauth2',
      'post',
      'responses',
      '200',
      'content',
      'application/json',
      'example',
    );
    example.expires_in = 'soon';
    expect(exampleProblems(document)).toEqual([
      expect.stringMatching(
        /^\/paths\/\/as\/token.oauth2\/post\/responses\/200\/content\/application\/json: .*expires_in must be number/,
      ),
    ]);
  });
});

function at(value: unknown, ...keys: string[]): Record<string, unknown> {
  let node = value;
  for (const key of keys) node = (node as Record<string, unknown>)[key];
  if (typeof node !== 'object' || node === null) throw new Error(`nothing at ${keys.join('/')}`);
  return node as Record<string, unknown>;
}

/** Messages for every example that fails its (dereferenced) schema. */
function exampleProblems(document: unknown): string[] {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  const problems: string[] = [];
  const seen = new Set<unknown>();
  for (const { pointer, schema, example } of examplesIn(document)) {
    // A component reached through several operations is one object after dereferencing.
    if (typeof example === 'object' && seen.has(example)) continue;
    seen.add(example);
    const check = ajv.compile(schema as object);
    if (!check(example)) problems.push(`${pointer}: ${ajv.errorsText(check.errors, { dataVar: 'example' })}`);
  }
  return problems;
}
