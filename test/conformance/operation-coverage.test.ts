import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import { OPERATION_TESTS } from './operation-tests.js';

const operations = loadPlatformDescription().operations;

describe('conformance coverage', () => {
  it('names a conformance test for every operation of the description (the token endpoint is the client’s own)', () => {
    const callable = operations.filter((operation) => operation.base !== 'auth').map((operation) => operation.id);
    expect(callable.filter((id) => !(id in OPERATION_TESTS))).toEqual([]);
    expect(Object.keys(OPERATION_TESTS).filter((id) => !callable.includes(id))).toEqual([]);
  });

  it('every test the table names exists in its file', () => {
    const sources = new Map<string, string>();
    const missing = Object.entries(OPERATION_TESTS).filter(([, { file, test }]) => {
      if (!sources.has(file)) sources.set(file, readFileSync(new URL(`./${file}.test.ts`, import.meta.url), 'utf8'));
      return !sources.get(file)!.includes(`it('${test}'`);
    });
    expect(missing).toEqual([]);
  });
});
