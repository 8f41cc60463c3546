/**
 * The role × operation matrix: every operation of the description, called through the API
 * client by sim-observer, sim-operator and sim-admin (in that order, so the admin's deletes
 * come last). A role without the operation's permission level gets 403 FORBIDDEN; a role
 * with it gets a success or a domain error (400, 404, 409, 412), never 401, 403 or 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallInput } from '../../src/api/index.js';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import { answerOf, expectNoViolations, ROLE_CLIENTS, startConformance, type Conformance, type JsonBody, type RoleName } from './harness.js';

const LEVELS: Record<RoleName, readonly string[]> = { observer: ['view'], operator: ['view', 'edit'], admin: ['view', 'edit', 'delete'] };
const ROLES = ['observer', 'operator', 'admin'] as const;

/** Ids of the default world the samples refer to. */
interface WorldIds {
  /** Prechecks, update and resume run here; refresh and add-cluster on systems of their own, so no role meets another's 409. */
  system: JsonBody;
  refreshSystem: JsonBody;
  clusterSystem: JsonBody;
  serverId: string;
  catalogId: string;
  policyId: string;
  /** Deleted by the admin; not the one being updated, which would answer 409. */
  deletePolicyId: string;
  dataServicesOperationId: string;
  report: { id: string; region: string };
  deviceId: string;
  devicesOperationId: string;
  subscriptionId: string;
  subscriptionsOperationId: string;
  settingsId: string;
  tenantId: string;
  userId: string;
  exportId: string;
  alphaExportId: string;
}

interface Sample {
  input: CallInput;
  region?: string;
}

const exportBody = (name: string) => ({
  name,
  kind: 'REPORT.EXPORTS' as const,
  type: 'SUBSCRIPTION',
  definition: {
    queryElements: { columns: ['SUBSCRIPTION_KEY'] },
    enrollment: { delivery: { format: 'CSV' as const, email: { subject: name, recipients: ['matrix@conformance.example'] } } },
  },
});

/** One input per operation, valid for every role (names carry the role so writes do not collide). */
const SAMPLES: Record<string, (ids: WorldIds, role: RoleName) => Sample> = {
  'privateCloud.listSystems': (ids) => ({ input: { limit: 10 }, region: ids.system.region }),
  'privateCloud.getSystem': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.listServers': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.getServer': (ids) => ({ input: { systemId: ids.system.id, serverId: ids.serverId }, region: ids.system.region }),
  'privateCloud.runSoftwarePrechecks': (ids) => ({ input: { id: ids.system.id, body: { catalogVersion: '2.4.0' } }, region: ids.system.region }),
  'privateCloud.runSoftwareUpdate': (ids) => ({ input: { id: ids.system.id, body: { catalogVersion: '2.4.0' } }, region: ids.system.region }),
  'privateCloud.resumeSoftwareUpdate': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.refreshSoftwareVersions': (ids) => ({ input: { id: ids.refreshSystem.id }, region: ids.refreshSystem.region }),
  'privateCloud.listSoftwareCatalogs': (ids) => ({ input: { filter: "version eq '2.4.0'" }, region: ids.system.region }),
  'privateCloud.getSoftwareCatalog': (ids) => ({ input: { id: ids.catalogId }, region: ids.system.region }),
  'privateCloud.addHypervisorCluster': (ids, role) => ({
    input: { id: ids.clusterSystem.id, body: { hypervisorClusterName: `matrix-${role}`, platformDatacenterName: 'dc-1' } },
    region: ids.clusterSystem.region,
  }),
  'privateCloud.listProvisioningPolicies': (ids) => ({ input: {}, region: ids.system.region }),
  'privateCloud.getProvisioningPolicy': (ids) => ({ input: { id: ids.policyId }, region: ids.system.region }),
  'privateCloud.createProvisioningPolicy': (ids, role) => ({ input: { body: { name: `matrix-${role}` } }, region: ids.system.region }),
  'privateCloud.updateProvisioningPolicy': (ids) => ({ input: { id: ids.policyId, body: { description: 'matrix' } }, region: ids.system.region }),
  'privateCloud.deleteProvisioningPolicy': (ids) => ({ input: { id: ids.deletePolicyId }, region: ids.system.region }),
  'dataServices.getAsyncOperation': (ids) => ({ input: { id: ids.dataServicesOperationId }, region: ids.system.region }),
  'consumptionAnalytics.listReports': (ids) => ({ input: {}, region: ids.report.region }),
  'consumptionAnalytics.getReport': (ids) => ({ input: { id: ids.report.id }, region: ids.report.region }),
  'consumptionAnalytics.downloadReportContents': (ids) => ({ input: { id: ids.report.id }, region: ids.report.region }),
  'devices.addDevices': (_ids, role) => ({ input: { body: { network: [], storage: [], compute: [{ serialNumber: `MATRIX-${role}`, partNumber: 'P1' }] } } }),
  'devices.listDevices': () => ({ input: { limit: 5 } }),
  'devices.getDevice': (ids) => ({ input: { id: ids.deviceId } }),
  'devices.updateDevices': (ids) => ({ input: { id: [ids.deviceId], body: { subscription: [] } } }),
  'devices.getAsyncOperation': (ids) => ({ input: { id: ids.devicesOperationId } }),
  'subscriptions.listSubscriptions': () => ({ input: { limit: 5 } }),
  'subscriptions.getSubscription': (ids) => ({ input: { id: ids.subscriptionId } }),
  'subscriptions.addSubscriptions': (_ids, role) => ({ input: { body: { subscriptions: [{ key: `MATRIX${role.toUpperCase()}01` }] } } }),
  'subscriptions.updateSubscriptions': (ids, role) => ({ input: { id: [ids.subscriptionId], body: { tags: { matrix: role } } } }),
  'subscriptions.getAsyncOperation': (ids) => ({ input: { id: ids.subscriptionsOperationId } }),
  'subscriptions.listAutoSubscriptionSettings': () => ({ input: {} }),
  'subscriptions.getAutoSubscriptionSettings': (ids) => ({ input: { id: ids.settingsId } }),
  'subscriptions.updateAutoSubscriptionSettings': (ids) => ({ input: { id: ids.settingsId, body: { autoSubscriptions: [{ deviceType: 'NETWORK', tier: 'ADVANCED' }] } } }),
  'workspaces.getWorkspace': (ids) => ({ input: { workspaceId: ids.tenantId } }),
  'workspaces.getWorkspaceContact': (ids) => ({ input: { id: ids.tenantId } }),
  'workspaces.listTenants': () => ({ input: {} }),
  'workspaces.createTenant': (_ids, role) => ({ input: { body: { workspaceName: `Matrix ${role}`, email: `${role}@matrix.example`, address: { countryCode: 'DE' } } } }),
  'workspaces.updateTenant': (ids, role) => ({ input: { tenantId: ids.tenantId, body: { workspaceName: `Matrix updated by ${role}`, email: 'x@matrix.example', address: { countryCode: 'FR' } } } }),
  'workspaces.deleteTenant': (ids) => ({ input: { tenantId: ids.tenantId } }),
  'users.listUsers': () => ({ input: { limit: 5 } }),
  'users.getUser': (ids) => ({ input: { id: ids.userId } }),
  'users.inviteUser': (_ids, role) => ({ input: { body: { email: `${role}@matrix.example` } } }),
  'users.updateUserPreferences': (ids) => ({ input: { id: ids.userId, body: { language: 'fr', idleTimeout: 900 } } }),
  'users.deleteUser': (ids) => ({ input: { id: ids.userId } }),
  'reporting.listReportExportsMetadata': () => ({ input: {} }),
  'reporting.createReportExport': (_ids, role) => ({ input: { body: exportBody(`Matrix ${role}`) } }),
  'reporting.listReportStatuses': () => ({ input: { filter: "status ne 'FAILED'" } }),
  'reporting.getReportStatus': (ids) => ({ input: { id: ids.exportId } }),
  'reporting.getAsyncOperation': (ids) => ({ input: { id: ids.exportId } }),
  'reportingV1alpha1.listReportExportsMetadata': () => ({ input: {} }),
  'reportingV1alpha1.createReportExport': (_ids, role) => ({ input: { body: exportBody(`Matrix alpha ${role}`) } }),
  'reportingV1alpha1.listReportStatuses': () => ({ input: { filter: "status ne 'FAILED'" } }),
  'reportingV1alpha1.getReportStatus': (ids) => ({ input: { id: ids.alphaExportId } }),
  'reportingV1alpha1.getAsyncOperation': (ids) => ({ input: { id: ids.alphaExportId } }),
};

/**
 * Operations whose success needs a prior state (a valid precheck, a failed update) that the
 * other roles' calls of the matrix race with; their success is driven in private-cloud.test.ts.
 */
const SUCCESS_ELSEWHERE = new Set(['privateCloud.runSoftwareUpdate', 'privateCloud.resumeSoftwareUpdate']);

const description = loadPlatformDescription();
const operations = description.operations.filter((operation) => operation.base !== 'auth');

let t: Conformance;
let ids: WorldIds;
beforeAll(async () => {
  t = await startConformance();
  const { admin } = t;
  const region = 'eu-central';
  const systems = (await admin.privateCloud.listSystems({ filter: "state eq 'ONLINE' and updateSupported eq true" }, { region })).body.items as JsonBody[];
  const system = systems[0];
  const online = async (at: string) => (await admin.privateCloud.listSystems({ filter: "state eq 'ONLINE'" }, { region: at })).body.items as JsonBody[];
  const [seedSystem, clusterSystem] = await online('us-west');
  const [refreshSystem] = await online('ap-northeast');
  const refresh = await admin.privateCloud.refreshSoftwareVersions({ id: seedSystem.id }, { region: 'us-west' });
  const [report] = (await admin.consumptionAnalytics.listReports({}, { region: 'us-west' })).body as JsonBody[];
  const devices = await admin.devices.addDevices({ body: { network: [], storage: [], compute: [{ serialNumber: 'MATRIX-SEED', partNumber: 'P1' }] } });
  const subscriptions = await admin.subscriptions.addSubscriptions({ body: { subscriptions: [{ key: 'MATRIXSEED0001' }] } });
  const tenants = await admin.workspaces.createTenant({ body: { workspaceName: 'Matrix tenant', email: 'm@matrix.example', address: { countryCode: 'DE' } } });
  const user = await admin.users.inviteUser({ body: { email: 'matrix.user@matrix.example', sendWelcomeEmail: false } });
  const policy = await admin.privateCloud.createProvisioningPolicy({ body: { name: 'matrix-policy' } }, { region });
  const doomed = await admin.privateCloud.createProvisioningPolicy({ body: { name: 'matrix-policy-doomed' } }, { region });
  ids = {
    system,
    refreshSystem,
    clusterSystem,
    serverId: ((await admin.privateCloud.listServers({ id: system.id }, { region })).body.items as JsonBody[])[0].id,
    catalogId: ((await admin.privateCloud.listSoftwareCatalogs({}, { region })).body.items as JsonBody[])[0].id,
    policyId: (policy.body as JsonBody).id,
    deletePolicyId: (doomed.body as JsonBody).id,
    dataServicesOperationId: refresh.headers.location!.split('/').pop()!,
    report: { id: report.id, region: 'us-west' },
    deviceId: ((await admin.devices.listDevices({ limit: 1 })).body.items as JsonBody[])[0].id,
    devicesOperationId: devices.headers.location!.split('/').pop()!,
    subscriptionId: ((await admin.subscriptions.listSubscriptions({ limit: 1 })).body.items as JsonBody[])[0].id,
    subscriptionsOperationId: subscriptions.headers.location!.split('/').pop()!,
    settingsId: ((await admin.subscriptions.listAutoSubscriptionSettings()).body.items as JsonBody[])[0].id,
    tenantId: tenants.headers.location!.split('/').pop()!,
    userId: user.headers.location!.split('/').pop()!,
    exportId: ((await admin.reporting.createReportExport({ body: exportBody('Matrix seed') })).body as JsonBody).id,
    alphaExportId: ((await admin.reportingV1alpha1.createReportExport({ body: exportBody('Matrix alpha seed') })).body as JsonBody).id,
  };
});
afterAll(async () => {
  await expectNoViolations(t.sim);
  await t.close();
});

describe('role × operation matrix', () => {
  it('has a sample input for every operation of the description', () => {
    expect(operations.map((operation) => operation.id).filter((id) => !(id in SAMPLES))).toEqual([]);
    expect(Object.keys(SAMPLES).filter((id) => !description.byId.has(id))).toEqual([]);
  });

  for (const operation of operations) {
    const level = operation.permission?.level;
    it(`${operation.id} (${level ?? 'no permission'}): 403 exactly for the roles without it`, async () => {
      const sample = SAMPLES[operation.id];
      expect(sample, `no sample for ${operation.id}`).toBeDefined();
      const outcomes: Record<string, number> = {};
      for (const role of ROLES) {
        const { input, region } = sample!(ids, role);
        const client = t[role];
        const answer = await answerOf(client.invoke(operation.id, input, region ? { region } : {}));
        outcomes[role] = answer.status;
        const allowed = level === undefined || LEVELS[role].includes(level);
        if (allowed) {
          expect(answer.status, `${ROLE_CLIENTS[role]} on ${operation.id}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
          expect([401, 403, 429]).not.toContain(answer.status);
          if (answer.status >= 300) expect([400, 404, 409, 412]).toContain(answer.status);
        } else {
          expect(answer, `${ROLE_CLIENTS[role]} on ${operation.id}`).toMatchObject({ status: 403, errorCode: 'FORBIDDEN' });
        }
      }
      // Each operation succeeds for at least one role: the samples are real inputs.
      if (!SUCCESS_ELSEWHERE.has(operation.id)) expect(Object.values(outcomes).some((status) => status < 300), JSON.stringify(outcomes)).toBe(true);
    });
  }
});
