/** The API description is a valid OpenAPI 3.1 document, and the routes the server serves are the ones it describes. */
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { API_DOCUMENT_PATH, apiRoute, readApiDocument } from '../../src/server/index.js';

describe('fleetbook-api.yaml', () => {
  it('passes the OpenAPI validator', async () => {
    const result = await validate(API_DOCUMENT_PATH);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('gives every operation a role but /healthz, and request schemas the server uses', () => {
    const document = readApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
    expect(operations.length).toBeGreaterThanOrEqual(14);
    for (const { operationId } of operations) {
      const route = apiRoute(operationId);
      if (operationId === 'health') expect(route.role).toBeUndefined();
      else expect(['viewer', 'operator', 'admin']).toContain(route.role);
    }
    expect(apiRoute('listRuns').schema).toMatchObject({
      querystring: { properties: { status: { enum: expect.arrayContaining(['waiting', 'cancelled']) } } },
    });
    expect(apiRoute('streamRunEvents').schema).toMatchObject({ headers: { properties: { 'last-event-id': {} } } });
    expect(apiRoute('getRun').url).toBe('/api/v1/runs/:runId');
  });
});
