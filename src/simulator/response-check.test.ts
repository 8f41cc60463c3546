import { describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../openapi/description.js';
import { responseProblems } from './response-check.js';
import { createSchemaValidator } from './schema-validator.js';

const description = loadPlatformDescription();
const validator = createSchemaValidator();
const check = (operationId: string, response: Parameters<typeof responseProblems>[1]): string[] => {
  const op = description.byId.get(operationId)!;
  return responseProblems(op, response, (status) => {
    const schema = op.responses[String(status)]?.schema;
    return schema ? validator.compile(schema as object) : null;
  });
};
const error = (status: number) => ({ errorCode: 'X', httpStatusCode: status, message: 'x', debugId: 'd' });

describe('responseProblems', () => {
  it('flags an error status the operation does not declare (users.listUsers declares 500, not 503)', () => {
    expect(check('users.listUsers', { status: 503, body: error(503) })).toEqual([
      'status 503 is not in the description',
    ]);
    expect(check('users.listUsers', { status: 500, body: error(500) })).toEqual([]);
  });

  it('flags a declared header the answer lacks: Location on 202, deprecation headers, Content-Disposition, rate-limit headers on 429', () => {
    expect(check('devices.addDevices', { status: 202 })).toEqual(['header Location is missing']);
    expect(
      check('devices.addDevices', { status: 202, headers: { location: '/devices/v1/async-operations/1' } }),
    ).toEqual([]);
    expect(
      check('reportingV1alpha1.listReportStatuses', {
        status: 200,
        body: { items: [], count: 0, offset: 0, total: 0 },
      }),
    ).toEqual(['header Deprecation is missing', 'header Sunset is missing', 'header Link is missing']);
    expect(
      check('consumptionAnalytics.downloadReportContents', { status: 200, headers: { 'content-type': 'text/csv' } }),
    ).toEqual(['header Content-Disposition is missing']);
    expect(check('users.getUser', { status: 429, body: error(429), headers: { 'ratelimit-limit': '1' } })).toEqual([
      'header ratelimit-remaining is missing',
      'header ratelimit-reset is missing',
    ]);
  });

  it('still checks a body against the declared schema', () => {
    expect(check('users.listUsers', { status: 500, body: { nope: true } }).length).toBeGreaterThan(0);
  });
});
