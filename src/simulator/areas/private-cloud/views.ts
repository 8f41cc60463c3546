import { asyncStateOf } from '../../async-operations.js';
import { availableCatalogs, VERSION_REFRESH_INTERVAL_MS, type Catalog, type Cluster, type PrivateCloudState, type System } from './model.js';

type UpdateState =
  | 'UP_TO_DATE'
  | 'UPDATE_AVAILABLE'
  | 'PRECHECK_IN_PROGRESS'
  | 'PRECHECK_FAILED'
  | 'PRECHECK_COMPLETE'
  | 'UPDATE_IN_PROGRESS'
  | 'UPDATE_FAILED';

/** When clusters differ, the system shows the most pressing state. */
const PRIORITY: readonly UpdateState[] = [
  'UPDATE_IN_PROGRESS',
  'PRECHECK_IN_PROGRESS',
  'UPDATE_FAILED',
  'PRECHECK_FAILED',
  'PRECHECK_COMPLETE',
  'UPDATE_AVAILABLE',
  'UP_TO_DATE',
];

const iso = (ms: number): string => new Date(ms).toISOString();

export function isPrecheckValid(cluster: Cluster, catalogVersion: string | undefined, nowMs: number): boolean {
  return cluster.precheck !== undefined && cluster.precheck.validUntilMs > nowMs && (catalogVersion === undefined || cluster.precheck.catalogVersion === catalogVersion);
}

function clusterUpdateState(system: System, cluster: Cluster, available: readonly Catalog[], nowMs: number): UpdateState {
  if (system.active?.clusterIds.includes(cluster.id)) {
    if (system.active.kind === 'software-prechecks') return 'PRECHECK_IN_PROGRESS';
    if (system.active.kind !== 'software-version-refresh' && system.active.kind !== 'add-hypervisor-cluster') return 'UPDATE_IN_PROGRESS';
  }
  if (system.failedUpdate?.clusterIds.includes(cluster.id)) return 'UPDATE_FAILED';
  if (cluster.precheckFailed !== undefined) return 'PRECHECK_FAILED';
  if (isPrecheckValid(cluster, undefined, nowMs)) return 'PRECHECK_COMPLETE';
  return available.length > 0 ? 'UPDATE_AVAILABLE' : 'UP_TO_DATE';
}

/** When the versions shown were last read from the system: the scheduled refresh, or a later on-demand one. */
function versionsRefreshedAt(system: System, nowMs: number): number {
  const scheduled = Math.floor(nowMs / VERSION_REFRESH_INTERVAL_MS) * VERSION_REFRESH_INTERVAL_MS;
  return Math.max(scheduled, system.versionsRefreshedAtMs ?? 0);
}

export function systemView(state: PrivateCloudState, system: System, nowMs: number): Record<string, unknown> {
  const latest = state.catalogs.at(-1)?.version;
  const clusters = system.clusters.map((cluster) => {
    const valid = isPrecheckValid(cluster, undefined, nowMs) ? cluster.precheck : undefined;
    const available = availableCatalogs(state, system, cluster);
    return {
      id: cluster.id,
      name: cluster.name,
      currentSoftwareVersion: cluster.currentVersion,
      updateState: clusterUpdateState(system, cluster, available, nowMs),
      ...(valid ? { precheckValidUntil: iso(valid.validUntilMs) } : {}),
      availableSoftwareCatalogs: available.map((catalog) => ({
        id: catalog.id,
        version: catalog.version,
        releaseDate: catalog.releaseDate,
        isLatest: catalog.version === latest,
      })),
      unavailableSoftwareCatalogs: cluster.unavailable.map((entry) => ({
        id: state.catalogs.find((catalog) => catalog.version === entry.version)?.id ?? entry.version,
        version: entry.version,
        reasons: entry.reasons,
      })),
    };
  });
  const validUntils = system.clusters.filter((c) => isPrecheckValid(c, undefined, nowMs)).map((c) => c.precheck?.validUntilMs ?? 0);
  const last = system.lastOperation;
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
    health: { status: system.healthStatus },
    associatedResourceCounts: { hypervisorClusters: system.clusters.length, servers: system.serverCount },
    hypervisorClusters: system.clusters.map((cluster) => ({
      id: cluster.id,
      name: cluster.name,
      resourceUri: `${system.resourceUri}/hypervisor-clusters/${cluster.id}`,
      type: cluster.type,
    })),
    systemVms: [],
    softwareInfo: {
      updateState: PRIORITY.find((candidate) => clusters.some((c) => c.updateState === candidate)) ?? 'UP_TO_DATE',
      ...(validUntils.length > 0 ? { precheckValidUntil: iso(Math.min(...validUntils)) } : {}),
      versionsRefreshedAt: iso(versionsRefreshedAt(system, nowMs)),
      ...(last
        ? {
            lastOperation: {
              id: last.record.id,
              type: last.record.type,
              location: last.location,
              state: asyncStateOf(last.record, nowMs).state,
              ...(last.catalogVersion ? { catalogVersion: last.catalogVersion } : {}),
              ...(last.clusterIds ? { hypervisorClusterIds: last.clusterIds } : {}),
              ...(system.failedUpdate && last.record.outcome?.status === 'FAILED' ? { failedStep: system.failedUpdate.failedStep } : {}),
              startedAt: iso(last.record.startedAt),
              ...(last.record.endedAt !== undefined ? { endedAt: iso(last.record.endedAt) } : {}),
            },
          }
        : {}),
      hypervisorClusters: clusters,
    },
  };
}

/** Systems with at least one cluster offering the catalog (computed from state, never stored). */
export function systemsWithUpdatePath(state: PrivateCloudState, catalog: Catalog, region: string): Array<Record<string, unknown>> {
  const result: Array<Record<string, unknown>> = [];
  for (const system of state.systems) {
    if (region && system.region !== region) continue;
    const clusterIds = system.clusters
      .filter((cluster) => availableCatalogs(state, system, cluster).some((c) => c.id === catalog.id))
      .map((cluster) => cluster.id);
    if (clusterIds.length > 0) result.push({ id: system.id, name: system.name, resourceUri: system.resourceUri, hypervisorClusterIds: clusterIds });
  }
  return result;
}

export function catalogView(state: PrivateCloudState, catalog: Catalog, region: string): Record<string, unknown> {
  return { ...catalog, systemsWithUpdatePath: systemsWithUpdatePath(state, catalog, region) };
}
