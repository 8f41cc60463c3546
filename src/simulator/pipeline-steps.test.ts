import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../openapi/index.js';
import { requireRoleFor } from './auth.js';
import { MalformedBody, SimHttpError } from './errors.js';
import { createInputCheck } from './input-validation.js';
import { applyRateLimit, createRateLimits } from './rate-limits.js';
import { REGION_HEADER, regionOf } from './regions.js';
import { createRequestLog, logArrival } from './request-log.js';
import { createResponseChecker, type ResponseViolation } from './response-check.js';
import { createSchemaValidator } from './schema-validator.js';

const description = loadPlatformDescription();
const op = (id: string) => description.byId.get(id)!;
/** The error a step throws, so its status and code can be asserted. */
const thrown = (step: () => void): SimHttpError => {
  try {
    step();
  } catch (error) {
    if (error instanceof SimHttpError) return error;
    throw error;
  }
  throw new Error('the step did not refuse');
};

describe('the steps of the request pipeline, without a port', () => {
  it('regionOf: the path prefix first, then the header, else region-agnostic; an unserved region is 404 UNKNOWN_REGION', () => {
    const listSystems = op('privateCloud.listSystems');
    expect(regionOf(listSystems, { [REGION_HEADER]: 'eu-west' }, 'us-west')).toBe('us-west');
    expect(regionOf(listSystems, { [REGION_HEADER]: 'eu-west' }, undefined)).toBe('eu-west');
    expect(regionOf(listSystems, {}, undefined)).toBe('');
    const unknown = thrown(() => regionOf(listSystems, {}, 'mars-1'));
    expect([unknown.status, unknown.errorCode]).toEqual([404, 'UNKNOWN_REGION']);
    expect(unknown.message).toContain('us-west, eu-west');
  });

  it('logArrival: the path without its query, secret keys scrubbed, a body that is not JSON not kept', () => {
    const log = createRequestLog();
    const token = logArrival(
      log,
      { method: 'POST', url: '/as/token.oauth2?x=1', body: { client_id: 'a', client_secret: 's' } },
      'auth.createToken',
      'sim',
    );
    const malformed = logArrival(
      log,
      { method: 'POST', url: '/x', body: new MalformedBody('{', new Error('bad')) },
      'op',
      'sim',
    );
    expect(token).toMatchObject({
      path: '/as/token.oauth2',
      operationId: 'auth.createToken',
      status: 0,
      simTime: 'sim',
      body: { client_id: 'a', client_secret: '[REDACTED]' },
    });
    expect(malformed).not.toHaveProperty('body');
    expect(log.list()).toEqual([token, malformed]);
  });

  it('requireRoleFor: an Observer is refused an edit with 403 FORBIDDEN naming role and level; an Operator is let through', () => {
    const update = op('privateCloud.updateSystem');
    const refused = thrown(() => requireRoleFor(update, { clientId: 'watcher', clientSecret: 's', role: 'Observer' }));
    expect([refused.status, refused.errorCode]).toEqual([403, 'FORBIDDEN']);
    expect(refused.message).toContain("Client 'watcher' (role Observer) lacks the edit level");
    expect(() => requireRoleFor(update, { clientId: 'op', clientSecret: 's', role: 'Operator' })).not.toThrow();
  });

  it("applyRateLimit: adds the group's headers; the request past the limit is a 429 carrying them", () => {
    const rateLimits = createRateLimits({ overrides: { privateCloud: 2 }, nowMs: () => 0 });
    const headers: Record<string, string> = {};
    applyRateLimit(rateLimits, op('privateCloud.listSystems'), 'c', headers);
    expect(headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1' });
    applyRateLimit(rateLimits, op('privateCloud.listSystems'), 'c', {});
    const limited = thrown(() => applyRateLimit(rateLimits, op('privateCloud.listSystems'), 'c', {}));
    expect([limited.status, limited.headers['ratelimit-remaining']]).toEqual([429, '0']);
  });

  it('createInputCheck: a body that is not JSON, then a bad query parameter, are 400s; compiles each schema once', () => {
    const compiled: object[] = [];
    const validator = createSchemaValidator();
    const check = createInputCheck({ compile: (schema) => (compiled.push(schema), validator.compile(schema)) });
    const listSystems = op('privateCloud.listSystems');
    expect(thrown(() => check(listSystems, {}, {}, new MalformedBody('{', new Error('bad')))).message).toContain(
      'not valid JSON',
    );
    expect(thrown(() => check(listSystems, {}, { limit: '0x10' }, undefined)).message).toContain('limit');
    expect(() => check(listSystems, {}, { limit: '16' }, undefined)).not.toThrow();
    expect(compiled).toHaveLength(1);
  });

  it('createResponseChecker: a drifting answer is listed and becomes 500 SIMULATOR_RESPONSE_INVALID, its headers kept and stream closed', () => {
    const violations: ResponseViolation[] = [];
    const check = createResponseChecker(createSchemaValidator(), violations);
    const listUsers = op('users.listUsers');
    const fine = { status: 500, body: { errorCode: 'X', httpStatusCode: 500, message: 'x', debugId: 'd' } };
    expect(check(listUsers, 'GET', '/identity/v1/users', fine)).toBe(fine);
    const stream = new PassThrough();
    const answered = check(listUsers, 'GET', '/identity/v1/users', { status: 503, headers: { 'x-kept': '1' }, stream });
    expect(answered).toMatchObject({
      status: 500,
      headers: { 'x-kept': '1' },
      body: { errorCode: 'SIMULATOR_RESPONSE_INVALID' },
    });
    expect(answered).not.toHaveProperty('stream');
    expect(stream.destroyed).toBe(true);
    expect(violations).toEqual([
      {
        operationId: 'users.listUsers',
        method: 'GET',
        path: '/identity/v1/users',
        status: 503,
        problems: ['status 503 is not in the description'],
      },
    ]);
  });
});
