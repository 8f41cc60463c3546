/**
 * The simulator's error bodies in devices, subscriptions and consumption analytics v2 are the
 * bodies the platform publishes for those statuses: each answer is checked against the
 * published component schema itself (read from ../shared/spec/published), with every object
 * closed, so a field the platform does not publish fails as surely as a missing one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

const PUBLISHED = fileURLToPath(new URL('../../../shared/spec/published/', import.meta.url));

/** Every object schema with properties and no word on extra fields is closed. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === 'example' ? value : closed(value)]),
  );
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

// The published descriptions live beside the repository, never in it: a checkout without them
// (a clone elsewhere) skips these tests and says so once.
const published = existsSync(PUBLISHED);
if (!published) console.warn(`published-error-bodies: skipped, ${PUBLISHED} is not beside this checkout`);

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
for (const area of published ? ['devices', 'subscriptions', 'consumption-analytics-v2'] : []) {
  const document = JSON.parse(readFileSync(`${PUBLISHED}${area}.json`, 'utf8')) as { components: unknown };
  ajv.addSchema({ $id: area, components: closed(document.components) });
}

/** The published schema's complaints about a body; empty when it is exactly a published body. */
function publishedComplaints(area: string, component: string, body: unknown): string[] {
  const validate = ajv.getSchema(`${area}#/components/schemas/${component}`);
  if (!validate) throw new Error(`no published component ${area} ${component}`);
  return validate(body)
    ? []
    : (validate.errors ?? []).map(
        (error) => `${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
      );
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function start(options: SimulatorOptions = {}) {
  const t = await startTestSimulator({ timeScale: 1, ...options });
  close = () => t.sim.close();
  return t;
}

describe.skipIf(!published)('published error bodies of devices, subscriptions and consumption analytics v2', () => {
  it('answers a bad request with its issues, in the published 400 body', async () => {
    const { call, sim } = await start();
    const bad = await call('GET', `/devices/v1/devices?filter=${encodeURIComponent("colour eq 'red'")}`);
    expect(bad.status).toBe(400);
    expect(publishedComplaints('devices', 'PlatformBadRequestError', bad.body)).toEqual([]);
    expect(bad.body.errorDetails).toEqual([
      {
        type: 'bad request',
        issues: [expect.objectContaining({ source: 'query.parameter', subject: 'filter' }) as unknown],
      },
    ]);
    const limit = await call('GET', '/subscriptions/v1/subscriptions?limit=0');
    expect(limit.status).toBe(400);
    expect(publishedComplaints('subscriptions', 'PlatformBadRequestError', limit.body)).toEqual([]);
    expect(sim.control.violations()).toEqual([]);
  });

  it('answers 401 and 404 with the published general body: source and metadata whose values are objects', async () => {
    const { call, sim } = await start();
    const anonymous = await fetch(`${sim.url}/devices/v1/devices`);
    expect(anonymous.status).toBe(401);
    const unauthorized = (await anonymous.json()) as JsonBody;
    expect(publishedComplaints('devices', 'PlatformGeneralError', unauthorized)).toEqual([]);
    expect(unauthorized.errorDetails).toEqual([
      { type: 'metadata', source: 'authorization', metadata: { token: { reason: 'missing' } } },
    ]);
    const missing = await call('GET', '/subscriptions/v1/subscriptions/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(publishedComplaints('subscriptions', 'PlatformGeneralError', missing.body)).toEqual([]);
    expect(sim.control.violations()).toEqual([]);
  });

  it('answers 429 with the general body and says the wait in a Retry-After header, 500 with an integer retry detail', async () => {
    const { call, sim } = await start({
      faults: {
        rules: [
          { route: 'subscriptions.listSubscriptions', status: 429, count: 1 },
          { route: 'devices.listDevices', status: 500, count: 1 },
        ],
      },
    });
    const limited = await call('GET', '/subscriptions/v1/subscriptions');
    expect(limited.status).toBe(429);
    expect(publishedComplaints('subscriptions', 'PlatformGeneralError', limited.body)).toEqual([]);
    expect(limited.body.errorDetails).toBeUndefined();
    expect(limited.headers.get('retry-after')).toBe('1');
    const failed = await call('GET', '/devices/v1/devices');
    expect(failed.status).toBe(500);
    expect(publishedComplaints('devices', 'PlatformServerError', failed.body)).toEqual([]);
    expect(failed.body.errorDetails).toEqual([{ type: 'retry info', retryAfterSeconds: 30 }]);
    expect(sim.control.violations()).toEqual([]);
  });

  it('answers consumption analytics v2 errors with the published message: flowContextId, issues naming source and subject', async () => {
    const { call, sim } = await start();
    const missing = await call('GET', '/consumption-analytics/v2/reports/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(publishedComplaints('consumption-analytics-v2', 'ErrorMessage', missing.body)).toEqual([]);
    expect(missing.body.flowContextId).toEqual(expect.any(String));
    expect(missing.body.flowContextId).not.toBe(missing.body.debugId);
    const bad = await call('GET', '/consumption-analytics/v2/reports?limit=-1');
    expect(bad.status).toBe(400);
    expect(publishedComplaints('consumption-analytics-v2', 'ErrorMessage', bad.body)).toEqual([]);
    expect(bad.body.errorDetails[0].issues[0]).toMatchObject({ source: 'query.parameter', subject: 'limit' });
    expect(sim.control.violations()).toEqual([]);
  });
});
