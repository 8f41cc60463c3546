/**
 * Which conformance test drives each operation of the description to a success answer.
 * `operation-coverage.test.ts` fails when an operation has no entry or an entry names a
 * test that does not exist; each file's closing check (`expectConformant`) fails when an
 * operation it owns never answered 2xx on its simulator.
 */
export const CONFORMANCE_FILES = [
  'private-cloud',
  'devices-subscriptions',
  'workspaces-users',
  'reporting-analytics',
] as const;
export type ConformanceFile = (typeof CONFORMANCE_FILES)[number];

export interface OperationTest {
  /** `test/conformance/<file>.test.ts` */
  file: ConformanceFile;
  /** The title of the `it` that drives the operation. */
  test: string;
}

const inventory = {
  file: 'private-cloud',
  test: 'inventory: systems by region, servers, catalogs with select, paging envelope',
} as const;
const lifecycle = {
  file: 'private-cloud',
  test: 'lifecycle: 409 without precheck, precheck, update failing at the pinned step, resume, catalogs follow',
} as const;
const refresh = {
  file: 'private-cloud',
  test: 'version refresh and add-hypervisor-cluster run as data-services operations',
} as const;
const analysis = {
  file: 'private-cloud',
  test: 'configuration analysis: start 202, the latest report of each system, a report by id; the data-services list',
} as const;
const policies = {
  file: 'private-cloud',
  test: 'provisioning policies: create 200, update and delete 202 with operations',
} as const;
const devices = {
  file: 'devices-subscriptions',
  test: 'devices: add 202 + Location, result, update assigns and applies subscriptions, get, list',
} as const;
const subscriptions = {
  file: 'devices-subscriptions',
  test: 'subscriptions: add by key, tag update, get, list',
} as const;
const autoSubscriptions = {
  file: 'devices-subscriptions',
  test: 'auto-subscription settings: upsert pairs, remove a pair with a null tier',
} as const;
const tenants = {
  file: 'workspaces-users',
  test: 'workspace, contact and MSP tenants: create 201 + Location, update, delete 204',
} as const;
const users = {
  file: 'workspaces-users',
  test: 'users: invite 201 + Location, duplicate 409, get, preferences, delete 204',
} as const;
const reportingV1 = {
  file: 'reporting-analytics',
  test: 'reporting v1: metadata, export stages, e-mail, download, expiry',
} as const;
const reportingV1alpha1 = {
  file: 'reporting-analytics',
  test: 'reporting v1alpha1: the same answers with Deprecation, Sunset and Link',
} as const;
const analytics = {
  file: 'reporting-analytics',
  test: 'consumption analytics: report list, definition, CSV attachment',
} as const;
const analyticsV2 = {
  file: 'reporting-analytics',
  test: 'consumption analytics v2: paged list, definition, usage fields, rows and CSV of a saved or ad-hoc report',
} as const;
const credentials = {
  file: 'workspaces-users',
  test: 'API credentials: create 201 with the secret once, token with it, reset, delete revokes its tokens',
} as const;

export const OPERATION_TESTS: Record<string, OperationTest> = {
  'privateCloud.listSystems': inventory,
  'privateCloud.getSystem': inventory,
  'privateCloud.listServers': inventory,
  'privateCloud.getServer': inventory,
  'privateCloud.listSoftwareCatalogs': inventory,
  'privateCloud.getSoftwareCatalog': inventory,
  'privateCloud.runSoftwarePrechecks': lifecycle,
  'privateCloud.runSoftwareUpdate': lifecycle,
  'privateCloud.resumeSoftwareUpdate': lifecycle,
  'dataServices.getAsyncOperation': lifecycle,
  'privateCloud.refreshSoftwareVersions': refresh,
  'privateCloud.refreshSoftwareVersionsByGet': refresh,
  'privateCloud.updateSystem': inventory,
  'privateCloud.startConfigurationAnalysis': analysis,
  'privateCloud.listConfigurationAnalysisReports': analysis,
  'privateCloud.getConfigurationAnalysisReport': analysis,
  'dataServices.listAsyncOperations': analysis,
  'privateCloud.addHypervisorCluster': refresh,
  'privateCloud.listProvisioningPolicies': policies,
  'privateCloud.getProvisioningPolicy': policies,
  'privateCloud.createProvisioningPolicy': policies,
  'privateCloud.updateProvisioningPolicy': policies,
  'privateCloud.deleteProvisioningPolicy': policies,
  'consumptionAnalytics.listReports': analytics,
  'consumptionAnalytics.getReport': analytics,
  'consumptionAnalytics.downloadReportContents': analytics,
  'consumptionAnalytics.listReportsV2': analyticsV2,
  'consumptionAnalytics.getReportV2': analyticsV2,
  'consumptionAnalytics.listUsageFieldsV2': analyticsV2,
  'consumptionAnalytics.executeReportV2': analyticsV2,
  'consumptionAnalytics.executeReportCsvV2': analyticsV2,
  'consumptionAnalytics.executeReportDefinitionV2': analyticsV2,
  'consumptionAnalytics.executeReportDefinitionCsvV2': analyticsV2,
  'devices.addDevices': devices,
  'devices.listDevices': devices,
  'devices.getDevice': devices,
  'devices.updateDevices': devices,
  'devices.getAsyncOperation': devices,
  'subscriptions.listSubscriptions': subscriptions,
  'subscriptions.getSubscription': subscriptions,
  'subscriptions.addSubscriptions': subscriptions,
  'subscriptions.updateSubscriptions': subscriptions,
  'subscriptions.getAsyncOperation': subscriptions,
  'subscriptions.listAutoSubscriptionSettings': autoSubscriptions,
  'subscriptions.getAutoSubscriptionSettings': autoSubscriptions,
  'subscriptions.updateAutoSubscriptionSettings': autoSubscriptions,
  'workspaces.getWorkspace': tenants,
  'workspaces.getWorkspaceContact': tenants,
  'workspaces.listTenants': tenants,
  'workspaces.createTenant': tenants,
  'workspaces.updateTenant': tenants,
  'workspaces.deleteTenant': tenants,
  'workspaces.listCredentials': credentials,
  'workspaces.createCredential': credentials,
  'workspaces.resetCredential': credentials,
  'workspaces.deleteCredential': credentials,
  'users.listUsers': users,
  'users.getUser': users,
  'users.inviteUser': users,
  'users.updateUserPreferences': users,
  'users.deleteUser': users,
  'reporting.listReportExportsMetadata': reportingV1,
  'reporting.createReportExport': reportingV1,
  'reporting.listReportStatuses': reportingV1,
  'reporting.getReportStatus': reportingV1,
  'reporting.getAsyncOperation': reportingV1,
  'reportingV1alpha1.listReportExportsMetadata': reportingV1alpha1,
  'reportingV1alpha1.createReportExport': reportingV1alpha1,
  'reportingV1alpha1.listReportStatuses': reportingV1alpha1,
  'reportingV1alpha1.getReportStatus': reportingV1alpha1,
  'reportingV1alpha1.getAsyncOperation': reportingV1alpha1,
};
