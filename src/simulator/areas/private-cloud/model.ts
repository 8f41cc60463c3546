import type { AsyncOperationRecord } from '../../context.js';
import type { RecordFields } from '../workspaces/world-time.js';

export const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'] as const;
/** Update steps, in order; a failed update resumes from the step that failed. */
export const UPDATE_STEPS = ['storage-software', 'hypervisor', 'server-firmware'] as const;
export type UpdateStep = (typeof UPDATE_STEPS)[number];

const MINUTE_MS = 60_000;
/** Simulated durations of the operations (the time scale divides them in real time). */
export const DURATIONS_MS = {
  precheck: 5 * MINUTE_MS,
  updateStep: 15 * MINUTE_MS,
  addCluster: 10 * MINUTE_MS,
  refresh: MINUTE_MS,
  policyChange: 30_000,
} as const;

export interface CatalogComponent {
  name: string;
  version: string;
  releaseDate: string;
  releaseNotesUrl: string;
}

export interface Catalog extends RecordFields {
  name: string;
  customerId: string;
  resourceUri: string;
  version: string;
  releaseDate: string;
  eula: string;
  hypervisor: CatalogComponent;
  hypervisorManager: CatalogComponent;
  serverFirmware: CatalogComponent;
  storageConnectionManager: CatalogComponent;
  storageSoftware: CatalogComponent;
}

export interface Server extends RecordFields {
  name: string;
  customerId: string;
  resourceUri: string;
  systemId: string;
  [field: string]: unknown;
}

export interface Cluster {
  id: string;
  name: string;
  type: string;
  currentVersion: string;
  /** Newer catalogs this cluster cannot take, with why. */
  unavailable: Array<{ version: string; reasons: string[] }>;
  /** The last successful precheck (valid until `validUntilMs`). */
  precheck?: { catalogVersion: string; validUntilMs: number };
  /** Catalog version of the last precheck when it failed. */
  precheckFailed?: string;
  /** The last precheck that ended (passed or failed): `lastPrecheckRunOn`, `lastPrecheckRunVersion`. */
  lastPrecheck?: { catalogVersion: string; endedAtMs: number };
  /** When an update of this cluster last ended (simulated ms): `lastUpdatedOn`. */
  lastUpdatedAtMs?: number;
}

export type SoftwareOperationKind =
  | 'software-prechecks'
  | 'software-update'
  | 'software-update-resume'
  | 'software-version-refresh'
  | 'add-hypervisor-cluster';

export interface System extends RecordFields {
  name: string;
  customerId: string;
  resourceUri: string;
  region: string;
  state: 'ONLINE' | 'OFFLINE';
  stackType: 'HCI_APPLIANCE' | 'DHCI';
  updateSupported: boolean;
  healthStatus: 'OK' | 'WARNING' | 'CRITICAL' | 'MISSING';
  clusters: Cluster[];
  /** The system's hypervisor manager, which every cluster of it reports. */
  hypervisorManager: { id: string; name: string; address: string };
  location: {
    city: string;
    countryCode: string;
    stateCode: string;
    zipCode: string;
    latitude: string;
    longitude: string;
  };
  /** Capacity of the system, bytes and MHz; usage is derived from it. */
  capacity: { cpuMhz: number; memoryBytes: number; storageBytes: number };
  /**
   * Generated on first read from the system's own rng fork: a world of thousands of
   * systems is built (and kept) without the servers nobody asks for.
   */
  readonly servers: Server[];
  /** `servers.length`, known without generating them. */
  serverCount: number;
  /** The software operation running now, if any (its clusters show it). */
  active?: { kind: SoftwareOperationKind; clusterIds: string[] };
  lastOperation?: { record: AsyncOperationRecord; location: string; catalogVersion?: string; clusterIds?: string[] };
  /** Set while the last update failed: what resume continues. */
  failedUpdate?: { catalogVersion: string; clusterIds: string[]; failedStep: UpdateStep };
  /** When the last on-demand version refresh ended (simulated ms). */
  versionsRefreshedAtMs?: number;
}

/**
 * Interval of the platform's scheduled version refresh of every system, simulated ms. The
 * reference says versions are refreshed at regular intervals without giving one: a day.
 */
export const VERSION_REFRESH_INTERVAL_MS = 24 * 60 * 60_000;

export interface Policy extends RecordFields {
  name: string;
  customerId: string;
  resourceUri: string;
  description: string;
  storageType: string;
  performancePolicy: { id: string };
  protectionPolicy?: Record<string, unknown>;
  volumeInfo: Record<string, unknown>;
  associatedObjects: Array<Record<string, unknown>>;
}

/** A failure pinned by the world file, resolved to ids. */
export interface PinnedFailure {
  systemId: string;
  clusterId?: string;
  operation: 'update' | 'precheck';
  step?: UpdateStep;
  remaining: number;
}

/** The result of a configuration analysis run on a system. */
export interface ConfigurationReport {
  id: string;
  systemId: string;
  systemName: string;
  createdBy: string;
  runStartedAtMs: number;
  createdAtMs: number;
  totalPassed: number;
  totalFailed: number;
  totalWarning: number;
}

/** Which systems an update leaves unhealthy (`degradeAfterUpdate` of the world file). */
export interface HealthDegrade {
  /** System ids that degrade at their next successful update (each once). */
  pinned: Set<string>;
  probability: number;
  to: 'WARNING' | 'CRITICAL';
}

export interface PrivateCloudState {
  customerId: string;
  systems: System[];
  systemsById: Map<string, System>;
  catalogs: Catalog[];
  policies: Policy[];
  /** Configuration analysis reports, oldest first. */
  reports: ConfigurationReport[];
  failures: PinnedFailure[];
  degradeAfterUpdate: HealthDegrade;
  precheckValidityMs: number;
}

/** Parsed dotted versions: a world has a handful of versions and every system view compares them. */
const parsedVersions = new Map<string, number[]>();
function parseVersion(version: string): number[] {
  let parsed = parsedVersions.get(version);
  if (!parsed) parsedVersions.set(version, (parsed = version.split('.').map(Number)));
  return parsed;
}

/** Dotted version order: `2.10.0` after `2.4.0`. */
export function compareVersions(a: string, b: string): number {
  const left = parseVersion(a);
  const right = parseVersion(b);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Catalogs a cluster can be updated to: newer than its version, not unavailable, on a family that supports updates. */
export function availableCatalogs(state: PrivateCloudState, system: System, cluster: Cluster): Catalog[] {
  if (!system.updateSupported) return [];
  return state.catalogs.filter(
    (catalog) =>
      compareVersions(catalog.version, cluster.currentVersion) > 0 &&
      !cluster.unavailable.some((entry) => entry.version === catalog.version),
  );
}
