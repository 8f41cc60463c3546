/**
 * Systems and catalogs as the platform publishes them (schemas/openapi/platform.yaml,
 * `System` and `SoftwareCatalog`), computed from the state when read.
 */
import { asyncStateOf } from '../../async-operations.js';
import {
  availableCatalogs,
  VERSION_REFRESH_INTERVAL_MS,
  type Catalog,
  type Cluster,
  type ConfigurationReport,
  type PrivateCloudState,
  type System,
} from './model.js';

type UpdateState =
  | 'UP_TO_DATE'
  | 'UPDATE_AVAILABLE'
  | 'PRECHECK_IN_PROGRESS'
  | 'PRECHECK_FAILED'
  | 'PRECHECK_COMPLETE'
  | 'UPDATE_IN_PROGRESS'
  | 'UPDATE_FAILED'
  | 'UPDATE_COMPLETE'
  | 'NOT_READY';

/** When clusters differ, the system shows the most pressing state. */
const PRIORITY: readonly UpdateState[] = [
  'UPDATE_IN_PROGRESS',
  'PRECHECK_IN_PROGRESS',
  'UPDATE_FAILED',
  'PRECHECK_FAILED',
  'PRECHECK_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_AVAILABLE',
  'NOT_READY',
  'UP_TO_DATE',
];

const iso = (ms: number): string => new Date(ms).toISOString();

export function isPrecheckValid(cluster: Cluster, catalogVersion: string | undefined, nowMs: number): boolean {
  return (
    cluster.precheck !== undefined &&
    cluster.precheck.validUntilMs > nowMs &&
    (catalogVersion === undefined || cluster.precheck.catalogVersion === catalogVersion)
  );
}

function clusterUpdateState(
  system: System,
  cluster: Cluster,
  available: readonly Catalog[],
  nowMs: number,
): UpdateState {
  if (system.state !== 'ONLINE') return 'NOT_READY';
  if (system.active?.clusterIds.includes(cluster.id)) {
    if (system.active.kind === 'software-prechecks') return 'PRECHECK_IN_PROGRESS';
    if (system.active.kind === 'software-update' || system.active.kind === 'software-update-resume')
      return 'UPDATE_IN_PROGRESS';
  }
  if (system.failedUpdate?.clusterIds.includes(cluster.id)) return 'UPDATE_FAILED';
  // A finished update shows as complete until the system's next software operation (a
  // refresh, say): its taskUri stays readable, which is how a lost update is found again.
  const last = system.lastOperation;
  const updated = last?.record.type === 'software-update' || last?.record.type === 'software-update-resume';
  if (updated && last?.clusterIds?.includes(cluster.id) && last.record.outcome?.status === 'SUCCEEDED')
    return 'UPDATE_COMPLETE';
  if (cluster.precheckFailed !== undefined) return 'PRECHECK_FAILED';
  if (isPrecheckValid(cluster, undefined, nowMs)) return 'PRECHECK_COMPLETE';
  return available.length > 0 ? 'UPDATE_AVAILABLE' : 'UP_TO_DATE';
}

/** When the versions shown were last read from the system: the scheduled refresh, or a later on-demand one. */
function versionsRefreshedAt(system: System, nowMs: number): number {
  const scheduled = Math.floor(nowMs / VERSION_REFRESH_INTERVAL_MS) * VERSION_REFRESH_INTERVAL_MS;
  return Math.max(scheduled, system.versionsRefreshedAtMs ?? 0);
}

/** A catalog's versions: its own and its components' (the shape of every catalog a system lists). */
function catalogVersions(catalog: Catalog): Record<string, unknown> {
  const {
    version,
    releaseDate,
    hypervisor,
    hypervisorManager,
    serverFirmware,
    storageConnectionManager,
    storageSoftware,
  } = catalog;
  return {
    version,
    releaseDate,
    hypervisor,
    hypervisorManager,
    serverFirmware,
    storageConnectionManager,
    storageSoftware,
  };
}

/**
 * An update status (system-wide or of one cluster): its state, and while an operation runs
 * or after it, that operation's catalog version, progress and path (`taskUri`).
 */
function updateStatus(
  system: System,
  state: UpdateState,
  clusterId: string | undefined,
  nowMs: number,
): Record<string, unknown> {
  const last = system.lastOperation;
  const covers = last && (clusterId === undefined || last.clusterIds?.includes(clusterId));
  if (
    !last ||
    !covers ||
    last.record.type === 'software-version-refresh' ||
    last.record.type === 'add-hypervisor-cluster'
  )
    return { state };
  const { progressPercent } = asyncStateOf(last.record, nowMs);
  return {
    state,
    ...(last.catalogVersion ? { catalogVersion: last.catalogVersion } : {}),
    percentage: Math.round(progressPercent),
    taskUri: last.location,
  };
}

const clusterUriOf = (system: System, cluster: Cluster): string =>
  `${system.resourceUri}/hypervisor-clusters/${cluster.id}`;

/** One cluster's software info: its catalog, update status, last precheck and the catalogs it can or cannot take. */
function clusterSoftwareView(state: PrivateCloudState, system: System, cluster: Cluster, nowMs: number) {
  const latest = state.catalogs.at(-1)?.version;
  const available = availableCatalogs(state, system, cluster);
  const current = state.catalogs.find((catalog) => catalog.version === cluster.currentVersion);
  const clusterState = clusterUpdateState(system, cluster, available, nowMs);
  return {
    customerId: system.customerId,
    generation: system.generation,
    createdAt: system.createdAt,
    updatedAt: system.updatedAt,
    id: cluster.id,
    name: cluster.name,
    type: 'hypervisor-cluster-software-info',
    resourceUri: clusterUriOf(system, cluster),
    currentSoftwareCatalog: current ? catalogVersions(current) : { version: cluster.currentVersion },
    currentUpdateStatus: updateStatus(system, clusterState, cluster.id, nowMs),
    ...(cluster.lastPrecheck
      ? {
          lastPrecheckRunOn: iso(cluster.lastPrecheck.endedAtMs),
          lastPrecheckRunVersion: cluster.lastPrecheck.catalogVersion,
        }
      : {}),
    ...(cluster.lastUpdatedAtMs !== undefined ? { lastUpdatedOn: iso(cluster.lastUpdatedAtMs) } : {}),
    availableSoftwareCatalogs: available.map((catalog) => ({
      ...catalogVersions(catalog),
      isLatest: catalog.version === latest,
    })),
    unavailableSoftwareCatalogs: cluster.unavailable.map((entry) => {
      const catalog = state.catalogs.find((c) => c.version === entry.version);
      return { ...(catalog ? catalogVersions(catalog) : { version: entry.version }), reasons: entry.reasons };
    }),
  };
}

/** The system's last software operation as `softwareInfo.lastOperation` shows it. */
function lastOperationView(system: System, nowMs: number): Record<string, unknown> | undefined {
  const last = system.lastOperation;
  if (!last) return undefined;
  return {
    id: last.record.id,
    type: last.record.type,
    location: last.location,
    state: asyncStateOf(last.record, nowMs).state,
    ...(last.catalogVersion ? { catalogVersion: last.catalogVersion } : {}),
    ...(last.clusterIds ? { hypervisorClusterIds: last.clusterIds } : {}),
    ...(system.failedUpdate && last.record.outcome?.status === 'FAILED'
      ? { failedStep: system.failedUpdate.failedStep }
      : {}),
    startedAt: iso(last.record.startedAt),
    ...(last.record.endedAt !== undefined ? { endedAt: iso(last.record.endedAt) } : {}),
  };
}

/** `softwareInfo`: the system's update status (its clusters' most pressing), precheck validity and clusters. */
function softwareInfoView(state: PrivateCloudState, system: System, nowMs: number): Record<string, unknown> {
  const clusters = system.clusters.map((cluster) => clusterSoftwareView(state, system, cluster, nowMs));
  const validUntils = system.clusters
    .filter((c) => isPrecheckValid(c, undefined, nowMs))
    .map((c) => c.precheck?.validUntilMs ?? 0);
  const updatedOn = system.clusters.map((c) => c.lastUpdatedAtMs ?? 0).filter((ms) => ms > 0);
  const systemState =
    PRIORITY.find((candidate) => clusters.some((c) => c.currentUpdateStatus.state === candidate)) ?? 'UP_TO_DATE';
  const lastOperation = lastOperationView(system, nowMs);
  return {
    currentUpdateStatus: updateStatus(system, systemState, undefined, nowMs),
    ...(validUntils.length > 0 ? { precheckValidUntil: iso(Math.min(...validUntils)) } : {}),
    ...(updatedOn.length > 0 ? { lastUpdatedOn: iso(Math.max(...updatedOn)) } : {}),
    versionsRefreshedAt: iso(versionsRefreshedAt(system, nowMs)),
    ...(lastOperation ? { lastOperation } : {}),
    hypervisorClusters: clusters,
  };
}

/** Health, counts, usage and storage of a system: fixed shapes derived from its size and state. */
function hardwareView(system: System): Record<string, unknown> {
  const online = system.state === 'ONLINE';
  const usedShare = online ? 0.35 + (system.clusters.length % 3) * 0.1 : 0;
  return {
    health: {
      overallHealth: system.healthStatus,
      servers: online ? 'OK' : 'MISSING',
      storage: online ? system.healthStatus : 'MISSING',
      network: online ? 'OK' : 'MISSING',
    },
    associatedResourceCounts: {
      hypervisorClusterCount: system.clusters.length,
      serversCount: system.serverCount,
      vmCount: system.serverCount * 12,
      datastoreCount: system.clusters.length * 2,
      storageArrayCount: 1,
      switchesCount: 2,
    },
    computeUsage: {
      cpuCapacityMhz: system.capacity.cpuMhz,
      cpuUsedMhz: Math.round(system.capacity.cpuMhz * usedShare),
      memoryCapacityBytes: system.capacity.memoryBytes,
      memoryUsedBytes: Math.round(system.capacity.memoryBytes * usedShare),
    },
    storageUsage: {
      sizeInBytes: system.capacity.storageBytes,
      usageInBytes: Math.round(system.capacity.storageBytes * usedShare),
    },
    storageSystem: {
      id: `st-${system.id}`,
      name: `${system.name}-storage`,
      resourceUri: `/storage-fleet/v1alpha1/storage-systems/st-${system.id}`,
      groupName: `${system.name}-group`,
      groupState: online ? 'online' : 'offline',
      groupLeaderName: `${system.name}-array-1`,
      groupLeaderSerialNumber: `AF-${system.id.slice(0, 8).toUpperCase()}`,
      compressionRatio: 1.8,
      dedupeRatio: 1.4,
    },
  };
}

/**
 * Until when `systemView` shows the same thing if nothing is written to the system: the next
 * scheduled version refresh, the first valid precheck to expire; `nowMs` itself (nothing to
 * reuse) while an operation runs, as its progress moves with time. Keep in step with what
 * the view below reads from the clock.
 */
export function systemViewStableUntil(system: System, nowMs: number): number {
  if (system.active || (system.lastOperation && !system.lastOperation.record.outcome)) return nowMs;
  let until = (Math.floor(nowMs / VERSION_REFRESH_INTERVAL_MS) + 1) * VERSION_REFRESH_INTERVAL_MS;
  for (const cluster of system.clusters) {
    const validUntilMs = cluster.precheck?.validUntilMs;
    if (validUntilMs !== undefined && validUntilMs > nowMs) until = Math.min(until, validUntilMs);
  }
  return until;
}

export function systemView(state: PrivateCloudState, system: System, nowMs: number): Record<string, unknown> {
  const report = latestReport(state, system.id);
  const { customerId, id, name, type, resourceUri, generation, createdAt, updatedAt } = system;
  return {
    id,
    name,
    type,
    resourceUri,
    generation,
    createdAt,
    updatedAt,
    customerId,
    stackType: system.stackType,
    state: system.state,
    region: system.region,
    updateSupported: system.updateSupported,
    ...hardwareView(system),
    location: system.location,
    ...(report ? { configAnalysisStatus: configAnalysisStatusOf(report) } : {}),
    hypervisorClusters: system.clusters.map((cluster) => ({
      id: cluster.id,
      name: cluster.name,
      resourceUri: clusterUriOf(system, cluster),
      hypervisorManagerId: system.hypervisorManager.id,
      hypervisorManagerName: system.hypervisorManager.name,
      hypervisorManagerAddress: system.hypervisorManager.address,
    })),
    systemVms: [],
    softwareInfo: softwareInfoView(state, system, nowMs),
  };
}

/** Systems with at least one cluster offering the catalog, with those clusters (computed from state, never stored). */
export function systemsWithUpdatePath(
  state: PrivateCloudState,
  catalog: Catalog,
  region: string,
): Array<Record<string, unknown>> {
  const result: Array<Record<string, unknown>> = [];
  for (const system of state.systems) {
    if (region && system.region !== region) continue;
    const clusters = system.clusters.filter((cluster) =>
      availableCatalogs(state, system, cluster).some((c) => c.id === catalog.id),
    );
    if (clusters.length > 0) {
      result.push({
        id: system.id,
        name: system.name,
        hypervisorClusters: clusters.map((cluster) => ({
          hypervisorClusterId: cluster.id,
          hypervisorClusterName: cluster.name,
        })),
      });
    }
  }
  return result;
}

export function catalogView(state: PrivateCloudState, catalog: Catalog, region: string): Record<string, unknown> {
  return { ...catalog, systemsWithUpdatePath: systemsWithUpdatePath(state, catalog, region) };
}

/** The latest report of a system, if it was ever analysed. */
export function latestReport(state: PrivateCloudState, systemId: string): ConfigurationReport | undefined {
  return state.reports.findLast((report) => report.systemId === systemId);
}

function configAnalysisStatusOf(report: ConfigurationReport): Record<string, unknown> {
  return {
    createdAt: iso(report.createdAtMs),
    createdBy: report.createdBy,
    ruleRunStartTime: iso(report.runStartedAtMs),
    nextScheduledRunTime: iso(report.createdAtMs + VERSION_REFRESH_INTERVAL_MS),
    totalPassed: report.totalPassed,
    totalFailed: report.totalFailed,
    totalWarning: report.totalWarning,
  };
}

export function reportView(state: PrivateCloudState, report: ConfigurationReport): Record<string, unknown> {
  return {
    id: report.id,
    type: 'configuration-analysis-report',
    systemId: report.systemId,
    systemName: report.systemName,
    createdAt: iso(report.createdAtMs),
    createdBy: report.createdBy,
    runStartedAt: iso(report.runStartedAtMs),
    runType: 'ON_DEMAND',
    nextScheduledRunAt: iso(report.createdAtMs + VERSION_REFRESH_INTERVAL_MS),
    totalPassed: report.totalPassed,
    totalFailed: report.totalFailed,
    totalWarning: report.totalWarning,
    results: { customerId: state.customerId, rulesRun: report.totalPassed + report.totalFailed + report.totalWarning },
  };
}
