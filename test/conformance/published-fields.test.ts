/**
 * The world fills the published fields: every property the description (the published one,
 * see schemas/openapi/published-differences/) gives the records of a list appears in at least
 * one record the default world answers. The exceptions are listed with their reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import { expectNoViolations, startConformance, type Conformance, type JsonBody } from './harness.js';

let t: Conformance;
beforeAll(async () => {
  t = await startConformance();
});
afterAll(async () => {
  await expectNoViolations(t.sim);
  await t.close();
});

/** Published fields the default world leaves out, and why. */
const NOT_FILLED: Record<string, Record<string, string>> = {
  'devices.listDevices': {
    dedicatedPlatformWorkspace:
      'only a device assigned to a dedicated platform has one; the world assigns devices to services',
    management: 'the workspace is not a managed-service tenant of another workspace',
    inUseWorkspace: 'the world has no devices lent to another workspace',
  },
};

const itemProperties = (operationId: string): string[] => {
  const schema = loadPlatformDescription().byId.get(operationId)?.responses['200']?.schema as JsonBody;
  return Object.keys(schema.properties.items.items.properties).sort();
};

describe('the default world fills the published fields', () => {
  it.each([
    ['devices.listDevices', {}],
    ['subscriptions.listSubscriptions', {}],
    ['users.listUsers', {}],
    ['workspaces.listTenants', {}],
    ['workspaces.listCredentials', {}],
    ['subscriptions.listAutoSubscriptionSettings', {}],
    ['consumptionAnalytics.listReportsV2', { limit: 100 }],
  ] as const)('%s', async (operationId, input) => {
    const answer = await t.admin.invoke(
      operationId,
      input,
      operationId.startsWith('consumptionAnalytics.') ? { region: 'us-west' } : {},
    );
    const items = (answer.body as JsonBody).items as JsonBody[];
    expect(items.length).toBeGreaterThan(0);
    const shown = new Set(items.flatMap((item) => Object.keys(item)));
    const missing = itemProperties(operationId).filter(
      (name) => !shown.has(name) && !(name in (NOT_FILLED[operationId] ?? {})),
    );
    expect(missing).toEqual([]);
  });
});
