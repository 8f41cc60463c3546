/**
 * src/api/generated/platform.ts is what `npm run generate:types` writes from platform.yaml:
 * regenerate it in memory, exactly as the CLI does, and compare.
 */
import { readFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';

const DESCRIPTION = new URL('../../schemas/openapi/platform.yaml', import.meta.url);
const GENERATED = new URL('../../src/api/generated/platform.ts', import.meta.url);

describe('generated platform types', () => {
  it('match platform.yaml (run `npm run generate:types` after changing it)', async () => {
    const fresh =
      COMMENT_HEADER + astToString(await openapiTS(DESCRIPTION, { silent: true, defaultNonNullable: false }));
    expect(fresh.includes('"privateCloud.runSoftwarePrechecks": {')).toBe(true);
    // Compared as a boolean: a diff of a 3,800-line file helps nobody; the command above fixes it.
    expect(
      fresh === readFileSync(GENERATED, 'utf8'),
      'src/api/generated/platform.ts is stale: run `npm run generate:types`',
    ).toBe(true);
  });
});
