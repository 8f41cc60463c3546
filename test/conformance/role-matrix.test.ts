/**
 * The role × operation matrix: every operation of the description, called through the API
 * client by sim-observer, sim-operator and sim-admin (in that order, so the admin's deletes
 * come last). A role the reference's permission table does not allow gets 403 FORBIDDEN; a
 * role it allows gets a success or a domain error (400, 404, 409, 412), never 401, 403 or 5xx.
 * The expected levels are written here from spec/platform-apis.md, not read from the
 * description's x-fleetbook-permission (which the simulator enforces), so a wrong level in
 * the description fails this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallInput } from '../../src/api/index.js';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import {
  answerOf,
  expectNoViolations,
  ROLE_CLIENTS,
  startConformance,
  type Conformance,
  type JsonBody,
  type RoleName,
} from './harness.js';

/** The reference's roles: Administrator (view, edit, delete), Operator (view, edit), Observer (view only). */
const LEVELS: Record<RoleName, readonly string[]> = {
  observer: ['view'],
  operator: ['view', 'edit'],
  admin: ['view', 'edit', 'delete'],
};
const ROLES = ['observer', 'operator', 'admin'] as const;

type Level = 'view' | 'edit' | 'delete' | 'none';
const PC = '/private-cloud-business/v1beta1';
/**
 * The reference's permission table, by method and path, as the level a role must grant
 * (`none`: any client). Where the reference gives no level, the documented assumptions
 * (schemas/openapi/CONVENTIONS.md, docs/simulator.md) are marked ASSUMED:
 * - a `.update`/`.apply`/`.edit` permission is the edit level, a `.read`/`.view` one the view level;
 * - every DELETE needs delete (policies list only `.apply`);
 * - catalog reads carry the update permission of their table row, so need edit;
 * - data-services async operations need the inventory reads (view);
 * - workspace contact is Platform Customer Account, View;
 * - report exports' unnamed edit permission is the edit level;
 * - consumption analytics needs no permission ("any user with access to the application").
 */
const REFERENCE_LEVELS: Record<string, Level> = {
  // Private cloud inventory reads
  [`GET ${PC}/systems`]: 'view',
  [`GET ${PC}/systems/{id}`]: 'view',
  [`GET ${PC}/systems/{id}/servers`]: 'view',
  [`GET ${PC}/systems/{systemId}/servers/{serverId}`]: 'view',
  'GET /data-services/v1beta1/async-operations/{id}': 'view', // ASSUMED
  // Software update and catalogs, and add cluster: the inventory permissions plus hci-cluster.update
  [`POST ${PC}/systems/{id}/software-prechecks`]: 'edit',
  [`POST ${PC}/systems/{id}/software-update`]: 'edit',
  [`POST ${PC}/systems/{id}/software-update-resume`]: 'edit',
  [`GET ${PC}/systems/{id}/software-version-refresh`]: 'edit',
  [`POST ${PC}/systems/{id}/software-version-refresh`]: 'edit', // the published form of the same refresh
  [`PATCH ${PC}/systems/{id}`]: 'edit', // ASSUMED (published, not in the reference): the update permission
  [`POST ${PC}/configuration-analysis-reports`]: 'edit', // ASSUMED (published only)
  [`GET ${PC}/configuration-analysis-reports`]: 'view', // ASSUMED (published only): an inventory read
  [`GET ${PC}/configuration-analysis-reports/{reportId}`]: 'view', // ASSUMED (published only)
  'GET /data-services/v1beta1/async-operations': 'view', // ASSUMED, as the single operation
  [`GET ${PC}/system-software-catalogs`]: 'edit', // ASSUMED (row names catalogs with the update)
  [`GET ${PC}/system-software-catalogs/{id}`]: 'edit', // ASSUMED
  [`POST ${PC}/systems/{id}/add-hypervisor-cluster`]: 'edit',
  // Provisioning policies: .read, .apply
  [`GET ${PC}/vm-provisioning-policies`]: 'view',
  [`GET ${PC}/vm-provisioning-policies/{id}`]: 'view',
  [`POST ${PC}/vm-provisioning-policies`]: 'edit',
  [`PATCH ${PC}/vm-provisioning-policies/{id}`]: 'edit',
  [`DELETE ${PC}/vm-provisioning-policies/{id}`]: 'delete', // ASSUMED
  // Consumption analytics: no permission names
  'GET /consumption-analytics/v1/reports': 'none', // ASSUMED
  'GET /consumption-analytics/v1/reports/{id}': 'none', // ASSUMED
  'GET /consumption-analytics/v1/reports/{id}/contents': 'none', // ASSUMED
  'GET /consumption-analytics/v2/reports': 'none', // ASSUMED (published only), as v1
  'GET /consumption-analytics/v2/reports/{id}': 'none', // ASSUMED (published only)
  'GET /consumption-analytics/v2/reports/usage-fields': 'none', // ASSUMED (published only)
  'POST /consumption-analytics/v2/reports/{id}/execute': 'none', // ASSUMED (published only)
  'POST /consumption-analytics/v2/reports/{id}/execute/csv': 'none', // ASSUMED (published only)
  'POST /consumption-analytics/v2/reports/execute': 'none', // ASSUMED (published only)
  'POST /consumption-analytics/v2/reports/execute/csv': 'none', // ASSUMED (published only)
  // Device and subscription reads (GET) view, writes (POST, PATCH) edit
  'GET /devices/v1/devices': 'view',
  'GET /devices/v1/devices/{id}': 'view',
  'POST /devices/v1/devices': 'edit',
  'PATCH /devices/v1/devices': 'edit',
  'GET /devices/v1/async-operations/{id}': 'view',
  'GET /subscriptions/v1/subscriptions': 'view',
  'GET /subscriptions/v1/subscriptions/{id}': 'view',
  'POST /subscriptions/v1/subscriptions': 'edit',
  'PATCH /subscriptions/v1/subscriptions': 'edit',
  'GET /subscriptions/v1/async-operations/{id}': 'view',
  'GET /subscriptions/v1/auto-subscription-settings': 'view',
  'GET /subscriptions/v1/auto-subscription-settings/{id}': 'view',
  'PATCH /subscriptions/v1/auto-subscription-settings/{id}': 'edit',
  // Workspaces: Platform Customer Account View / Edit / Delete
  'GET /workspaces/v1/workspaces/{workspaceId}': 'view',
  'GET /workspaces/v1/workspaces/{workspaceId}/contact': 'view', // ASSUMED
  'GET /workspaces/v1/msp-tenants': 'view',
  'POST /workspaces/v1/msp-tenants': 'edit',
  'PUT /workspaces/v1/msp-tenants/{tenantId}': 'edit',
  'DELETE /workspaces/v1/msp-tenants/{tenantId}': 'delete',
  'GET /workspaces/v1/credentials': 'view', // ASSUMED (published only): the workspace permission
  'POST /workspaces/v1/credentials': 'edit', // ASSUMED (published only)
  'POST /workspaces/v1/credentials/{credentialId}/reset': 'edit', // ASSUMED (published only)
  'DELETE /workspaces/v1/credentials/{credentialId}': 'delete', // ASSUMED (published only), as every DELETE
  // Users: GET view, POST edit, PUT User Account View (sic), DELETE delete
  'GET /identity/v1/users': 'view',
  'GET /identity/v1/users/{id}': 'view',
  'POST /identity/v1/users': 'edit',
  'PUT /identity/v1/users/{id}': 'view',
  'DELETE /identity/v1/users/{id}': 'delete',
  // Reporting reads view; POST /report-exports an edit permission (v1 and the deprecated v1alpha1)
  ...Object.fromEntries(
    ['v1', 'v1alpha1'].flatMap((version) => [
      [`GET /reporting/${version}/report-exports-metadata`, 'view'],
      [`POST /reporting/${version}/report-exports`, 'edit'], // level ASSUMED
      [`GET /reporting/${version}/statuses`, 'view'],
      [`GET /reporting/${version}/statuses/{id}`, 'view'],
      [`GET /reporting/${version}/async-operations/{id}`, 'view'],
    ]),
  ),
};
const referenceLevelOf = (operation: { method: string; path: string }): Level | undefined =>
  REFERENCE_LEVELS[`${operation.method.toUpperCase()} ${operation.path}`];

/** Ids of the default world the samples refer to. */
interface WorldIds {
  /** Prechecks, update and resume run here; refresh and add-cluster on systems of their own, so no role meets another's 409. */
  system: JsonBody;
  refreshSystem: JsonBody;
  /** The reference's GET of the refresh runs on a system of its own, so it never meets the POST's 409. */
  getRefreshSystem: JsonBody;
  clusterSystem: JsonBody;
  serverId: string;
  catalogId: string;
  policyId: string;
  /** Deleted by the admin; not the one being updated, which would answer 409. */
  deletePolicyId: string;
  dataServicesOperationId: string;
  /** A configuration analysis report of `system`. */
  reportId: string;
  report: { id: string; region: string };
  deviceId: string;
  devicesOperationId: string;
  subscriptionId: string;
  subscriptionsOperationId: string;
  settingsId: string;
  tenantId: string;
  /** Two credentials of the world: one reset by the roles allowed to, one deleted by the admin. */
  resetCredentialId: string;
  deleteCredentialId: string;
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
    enrollment: {
      delivery: { format: 'CSV' as const, email: { subject: name, recipients: ['matrix@conformance.example'] } },
    },
  },
});

const METADATA_QUERY = { filter: "kind eq 'REPORT.EXPORTS.METADATA'", select: 'type', sort: 'type' };
const AD_HOC_REPORT = {
  columns: [{ fieldName: 'sys_Product_s' }],
  filter: { dateFilter: { type: 'RELATIVE' as const, relativeRange: 'LAST_7_DAYS' as const } },
};

/** One input per operation, valid for every role (names carry the role so writes do not collide). */
const SAMPLES: Record<string, (ids: WorldIds, role: RoleName) => Sample> = {
  'privateCloud.listSystems': (ids) => ({ input: { limit: 10 }, region: ids.system.region }),
  'privateCloud.getSystem': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.listServers': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.getServer': (ids) => ({
    input: { systemId: ids.system.id, serverId: ids.serverId },
    region: ids.system.region,
  }),
  'privateCloud.runSoftwarePrechecks': (ids) => ({
    input: { id: ids.system.id, body: { catalogVersion: '2.4.0' } },
    region: ids.system.region,
  }),
  'privateCloud.runSoftwareUpdate': (ids) => ({
    input: { id: ids.system.id, body: { catalogVersion: '2.4.0' } },
    region: ids.system.region,
  }),
  'privateCloud.resumeSoftwareUpdate': (ids) => ({ input: { id: ids.system.id }, region: ids.system.region }),
  'privateCloud.refreshSoftwareVersions': (ids) => ({
    input: { id: ids.refreshSystem.id },
    region: ids.refreshSystem.region,
  }),
  'privateCloud.refreshSoftwareVersionsByGet': (ids) => ({
    input: { id: ids.getRefreshSystem.id },
    region: ids.getRefreshSystem.region,
  }),
  'privateCloud.updateSystem': (ids, role) => ({
    input: { id: ids.system.id, body: { location: { city: `matrix-${role}` } } },
    region: ids.system.region,
  }),
  'privateCloud.startConfigurationAnalysis': (ids) => ({
    input: { body: { systemId: ids.system.id } },
    region: ids.system.region,
  }),
  'privateCloud.listConfigurationAnalysisReports': (ids) => ({ input: {}, region: ids.system.region }),
  'privateCloud.getConfigurationAnalysisReport': (ids) => ({
    input: { reportId: ids.reportId },
    region: ids.system.region,
  }),
  'dataServices.listAsyncOperations': (ids) => ({ input: {}, region: ids.system.region }),
  'privateCloud.listSoftwareCatalogs': (ids) => ({
    input: { filter: "version eq '2.4.0'" },
    region: ids.system.region,
  }),
  'privateCloud.getSoftwareCatalog': (ids) => ({ input: { id: ids.catalogId }, region: ids.system.region }),
  'privateCloud.addHypervisorCluster': (ids, role) => ({
    input: {
      id: ids.clusterSystem.id,
      body: { hypervisorClusterName: `matrix-${role}`, platformDatacenterName: 'dc-1' },
    },
    region: ids.clusterSystem.region,
  }),
  'privateCloud.listProvisioningPolicies': (ids) => ({ input: {}, region: ids.system.region }),
  'privateCloud.getProvisioningPolicy': (ids) => ({ input: { id: ids.policyId }, region: ids.system.region }),
  'privateCloud.createProvisioningPolicy': (ids, role) => ({
    input: { body: { name: `matrix-${role}` } },
    region: ids.system.region,
  }),
  'privateCloud.updateProvisioningPolicy': (ids) => ({
    input: { id: ids.policyId, body: { description: 'matrix' } },
    region: ids.system.region,
  }),
  'privateCloud.deleteProvisioningPolicy': (ids) => ({ input: { id: ids.deletePolicyId }, region: ids.system.region }),
  'dataServices.getAsyncOperation': (ids) => ({
    input: { id: ids.dataServicesOperationId },
    region: ids.system.region,
  }),
  'consumptionAnalytics.listReports': (ids) => ({ input: {}, region: ids.report.region }),
  'consumptionAnalytics.getReport': (ids) => ({ input: { id: ids.report.id }, region: ids.report.region }),
  'consumptionAnalytics.downloadReportContents': (ids) => ({ input: { id: ids.report.id }, region: ids.report.region }),
  'consumptionAnalytics.listReportsV2': (ids) => ({ input: {}, region: ids.report.region }),
  'consumptionAnalytics.getReportV2': (ids) => ({ input: { id: ids.report.id }, region: ids.report.region }),
  'consumptionAnalytics.listUsageFieldsV2': (ids) => ({ input: {}, region: ids.report.region }),
  'consumptionAnalytics.executeReportV2': (ids) => ({
    input: { id: ids.report.id, body: { relativeDate: 'LAST_7_DAYS' } },
    region: ids.report.region,
  }),
  'consumptionAnalytics.executeReportCsvV2': (ids) => ({
    input: { id: ids.report.id, body: {} },
    region: ids.report.region,
  }),
  'consumptionAnalytics.executeReportDefinitionV2': (ids) => ({
    input: { body: AD_HOC_REPORT },
    region: ids.report.region,
  }),
  'consumptionAnalytics.executeReportDefinitionCsvV2': (ids) => ({
    input: { body: AD_HOC_REPORT },
    region: ids.report.region,
  }),
  'devices.addDevices': (_ids, role) => ({
    input: { body: { network: [], storage: [], compute: [{ serialNumber: `MATRIX-${role}`, partNumber: 'P1' }] } },
  }),
  'devices.listDevices': () => ({ input: { limit: 5 } }),
  'devices.getDevice': (ids) => ({ input: { id: ids.deviceId } }),
  'devices.updateDevices': (ids) => ({ input: { id: [ids.deviceId], body: { subscription: [] } } }),
  'devices.getAsyncOperation': (ids) => ({ input: { id: ids.devicesOperationId } }),
  'subscriptions.listSubscriptions': () => ({ input: { limit: 5 } }),
  'subscriptions.getSubscription': (ids) => ({ input: { id: ids.subscriptionId } }),
  'subscriptions.addSubscriptions': (_ids, role) => ({
    input: { body: { subscriptions: [{ key: `MATRIX${role.toUpperCase()}01` }] } },
  }),
  'subscriptions.updateSubscriptions': (ids, role) => ({
    input: { id: [ids.subscriptionId], body: { tags: { matrix: role } } },
  }),
  'subscriptions.getAsyncOperation': (ids) => ({ input: { id: ids.subscriptionsOperationId } }),
  'subscriptions.listAutoSubscriptionSettings': () => ({ input: {} }),
  'subscriptions.getAutoSubscriptionSettings': (ids) => ({ input: { id: ids.settingsId } }),
  'subscriptions.updateAutoSubscriptionSettings': (ids) => ({
    input: {
      id: ids.settingsId,
      body: { autoSubscriptionSettings: [{ deviceType: 'SWITCH', tier: 'ADVANCED_SWITCH' }] },
    },
  }),
  'workspaces.getWorkspace': (ids) => ({ input: { workspaceId: ids.tenantId } }),
  'workspaces.getWorkspaceContact': (ids) => ({ input: { workspaceId: ids.tenantId } }),
  'workspaces.listTenants': () => ({ input: {} }),
  'workspaces.createTenant': (_ids, role) => ({
    input: {
      body: { workspaceName: `Matrix ${role}`, email: `${role}@matrix.example`, address: { countryCode: 'DE' } },
    },
  }),
  'workspaces.updateTenant': (ids, role) => ({
    input: {
      tenantId: ids.tenantId,
      body: { workspaceName: `Matrix updated by ${role}`, email: 'x@matrix.example', address: { countryCode: 'FR' } },
    },
  }),
  'workspaces.deleteTenant': (ids) => ({ input: { tenantId: ids.tenantId } }),
  'workspaces.listCredentials': () => ({ input: {} }),
  'workspaces.createCredential': (_ids, role) => ({ input: { body: { credentialName: `Matrix ${role}` } } }),
  'workspaces.resetCredential': (ids) => ({ input: { credentialId: ids.resetCredentialId } }),
  'workspaces.deleteCredential': (ids) => ({ input: { credentialId: ids.deleteCredentialId } }),
  'users.listUsers': () => ({ input: { limit: 5 } }),
  'users.getUser': (ids) => ({ input: { id: ids.userId } }),
  'users.inviteUser': (_ids, role) => ({ input: { body: { email: `${role}@matrix.example` } } }),
  'users.updateUserPreferences': (ids) => ({ input: { id: ids.userId, body: { language: 'fr', idleTimeout: 900 } } }),
  'users.deleteUser': (ids) => ({ input: { id: ids.userId } }),
  'reporting.listReportExportsMetadata': () => ({ input: METADATA_QUERY }),
  'reporting.createReportExport': (_ids, role) => ({ input: { body: exportBody(`Matrix ${role}`) } }),
  'reporting.listReportStatuses': () => ({ input: { filter: "status ne 'FAILED'" } }),
  'reporting.getReportStatus': (ids) => ({ input: { id: ids.exportId } }),
  'reporting.getAsyncOperation': (ids) => ({ input: { id: ids.exportId } }),
  'reportingV1alpha1.listReportExportsMetadata': () => ({ input: METADATA_QUERY }),
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
  const systems = (
    await admin.privateCloud.listSystems({ filter: "state eq 'ONLINE' and updateSupported eq true" }, { region })
  ).body.items as JsonBody[];
  const system = systems[0];
  const online = async (at: string) =>
    (await admin.privateCloud.listSystems({ filter: "state eq 'ONLINE'" }, { region: at })).body.items as JsonBody[];
  const [seedSystem, clusterSystem] = await online('us-west');
  const [refreshSystem] = await online('ap-northeast');
  const [getRefreshSystem] = await online('eu-west');
  const refresh = await admin.privateCloud.refreshSoftwareVersions({ id: seedSystem.id }, { region: 'us-west' });
  const analysis = await admin.privateCloud.startConfigurationAnalysis({ body: { systemId: system.id } }, { region });
  await admin.waitForOperation(analysis, { minPollMs: 1, maxPollMs: 5, timeoutMs: 15_000 });
  const reportId = (
    (await admin.privateCloud.listConfigurationAnalysisReports({}, { region })).body.items as JsonBody[]
  )[0].id as string;
  const [report] = (await admin.consumptionAnalytics.listReports({}, { region: 'us-west' })).body as JsonBody[];
  const devices = await admin.devices.addDevices({
    body: { network: [], storage: [], compute: [{ serialNumber: 'MATRIX-SEED', partNumber: 'P1' }] },
  });
  const subscriptions = await admin.subscriptions.addSubscriptions({
    body: { subscriptions: [{ key: 'MATRIXSEED0001' }] },
  });
  const tenants = await admin.workspaces.createTenant({
    body: { workspaceName: 'Matrix tenant', email: 'm@matrix.example', address: { countryCode: 'DE' } },
  });
  const credentials = (await admin.workspaces.listCredentials()).body.items as JsonBody[];
  const user = await admin.users.inviteUser({ body: { email: 'matrix.user@matrix.example', sendWelcomeEmail: false } });
  const policy = await admin.privateCloud.createProvisioningPolicy({ body: { name: 'matrix-policy' } }, { region });
  const doomed = await admin.privateCloud.createProvisioningPolicy(
    { body: { name: 'matrix-policy-doomed' } },
    { region },
  );
  ids = {
    system,
    refreshSystem,
    getRefreshSystem,
    clusterSystem,
    serverId: ((await admin.privateCloud.listServers({ id: system.id }, { region })).body.items as JsonBody[])[0].id,
    catalogId: ((await admin.privateCloud.listSoftwareCatalogs({}, { region })).body.items as JsonBody[])[0].id,
    policyId: (policy.body as JsonBody).id,
    deletePolicyId: (doomed.body as JsonBody).id,
    dataServicesOperationId: refresh.headers.location!.split('/').pop()!,
    reportId,
    report: { id: report.id, region: 'us-west' },
    deviceId: ((await admin.devices.listDevices({ limit: 1 })).body.items as JsonBody[])[0].id,
    devicesOperationId: devices.headers.location!.split('/').pop()!,
    subscriptionId: ((await admin.subscriptions.listSubscriptions({ limit: 1 })).body.items as JsonBody[])[0].id,
    subscriptionsOperationId: subscriptions.headers.location!.split('/').pop()!,
    settingsId: ((await admin.subscriptions.listAutoSubscriptionSettings()).body.items as JsonBody[])[0].id,
    resetCredentialId: credentials[0].id,
    deleteCredentialId: credentials[1].id,
    tenantId: tenants.headers.location!.split('/').pop()!,
    userId: user.headers.location!.split('/').pop()!,
    exportId: ((await admin.reporting.createReportExport({ body: exportBody('Matrix seed') })).body as JsonBody).id,
    alphaExportId: (
      (await admin.reportingV1alpha1.createReportExport({ body: exportBody('Matrix alpha seed') })).body as JsonBody
    ).id,
  };
});
afterAll(async () => {
  await expectNoViolations(t.sim);
  await t.close();
});

describe('role × operation matrix', () => {
  it("has the reference's level for every operation of the description, and no row the description lacks", () => {
    expect(
      operations
        .filter((operation) => referenceLevelOf(operation) === undefined)
        .map((operation) => `${operation.method} ${operation.path}`),
    ).toEqual([]);
    const described = new Set(operations.map((operation) => `${operation.method.toUpperCase()} ${operation.path}`));
    expect(Object.keys(REFERENCE_LEVELS).filter((key) => !described.has(key))).toEqual([]);
  });

  it('has a sample input for every operation of the description', () => {
    expect(operations.map((operation) => operation.id).filter((id) => !(id in SAMPLES))).toEqual([]);
    expect(Object.keys(SAMPLES).filter((id) => !description.byId.has(id))).toEqual([]);
  });

  for (const operation of operations) {
    const level = referenceLevelOf(operation);
    it(`${operation.id} (${level ?? 'not in the reference table'}): 403 exactly for the roles without it`, async () => {
      expect(level, `${operation.method} ${operation.path} is not in REFERENCE_LEVELS`).toBeDefined();
      const sample = SAMPLES[operation.id];
      expect(sample, `no sample for ${operation.id}`).toBeDefined();
      const outcomes: Record<string, number> = {};
      for (const role of ROLES) {
        const { input, region } = sample!(ids, role);
        const client = t[role];
        const answer = await answerOf(client.invoke(operation.id, input, region ? { region } : {}));
        outcomes[role] = answer.status;
        const allowed = level === 'none' || LEVELS[role].includes(level!);
        if (allowed) {
          expect(
            answer.status,
            `${ROLE_CLIENTS[role]} on ${operation.id}: ${JSON.stringify(answer.body)}`,
          ).toBeLessThan(500);
          expect([401, 403, 429]).not.toContain(answer.status);
          if (answer.status >= 300) expect([400, 404, 409, 412]).toContain(answer.status);
        } else {
          expect(answer, `${ROLE_CLIENTS[role]} on ${operation.id}`).toMatchObject({
            status: 403,
            errorCode: 'FORBIDDEN',
          });
        }
      }
      // Each operation succeeds for at least one role: the samples are real inputs.
      if (!SUCCESS_ELSEWHERE.has(operation.id))
        expect(
          Object.values(outcomes).some((status) => status < 300),
          JSON.stringify(outcomes),
        ).toBe(true);
    });
  }
});
