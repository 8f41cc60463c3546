import { UsageError } from '../../../errors/index.js';
import type { Rng } from '../../context.js';
import { generatedRecord } from '../workspaces/world-time.js';
import {
  REGIONS,
  UPDATE_STEPS,
  compareVersions,
  type Catalog,
  type Cluster,
  type PinnedFailure,
  type Policy,
  type PrivateCloudState,
  type Server,
  type System,
  type HealthDegrade,
  type UpdateStep,
} from './model.js';

const BASE = '/private-cloud-business/v1beta1';

/** World-file section `privateCloud`. */
export interface PrivateCloudConfig {
  /** @default 6 */
  systems?: number;
  /**
   * Every system gets exactly this many hypervisor clusters (a fleet of one shape, as the
   * 10,000-system benchmark needs). @default 2 to 4, drawn per system
   */
  clustersPerSystem?: number;
  /** How long a successful precheck stays valid, simulated minutes. @default 240 */
  precheckValidityMinutes?: number;
  /** Pinned failures; `[]` for none. @default one failure at the hypervisor step of the first system's first cluster */
  failures?: Array<{
    system: string;
    cluster?: string;
    operation: 'update' | 'precheck';
    step?: UpdateStep;
    times?: number;
  }>;
  /**
   * Systems whose health degrades when an update of theirs succeeds: the named ones at their
   * next update, any other with `probability` (drawn from the system and the version, so the
   * same world degrades the same systems whatever the order of the updates). @default none
   */
  degradeAfterUpdate?: {
    systems?: string[];
    /** @default 0 */
    probability?: number;
    /** @default CRITICAL */
    to?: 'WARNING' | 'CRITICAL';
  };
}

export const PRIVATE_CLOUD_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    systems: { type: 'integer', minimum: 1, maximum: 100_000 },
    clustersPerSystem: { type: 'integer', minimum: 1, maximum: 26 },
    precheckValidityMinutes: { type: 'number', exclusiveMinimum: 0 },
    failures: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['system', 'operation'],
        properties: {
          system: { type: 'string', minLength: 1 },
          cluster: { type: 'string', minLength: 1 },
          operation: { enum: ['update', 'precheck'] },
          step: { enum: UPDATE_STEPS },
          times: { type: 'integer', minimum: 1 },
        },
      },
    },
    degradeAfterUpdate: {
      type: 'object',
      additionalProperties: false,
      properties: {
        systems: { type: 'array', items: { type: 'string', minLength: 1 } },
        probability: { type: 'number', minimum: 0, maximum: 1 },
        to: { enum: ['WARNING', 'CRITICAL'] },
      },
    },
  },
} as const;

const CATALOG_VERSIONS = [
  { version: '2.2.0', releaseDate: '2024-06-18' },
  { version: '2.3.1', releaseDate: '2024-11-05' },
  { version: '2.4.0', releaseDate: '2025-02-20' },
] as const;

/** One component of a catalog, released with it. */
const component = (name: string, version: string, releaseDate: string) => ({
  name,
  version,
  releaseDate,
  releaseNotesUrl: `https://docs.example.com/release-notes/${name}/${version}.html`,
});

/** Where the systems stand, by region (derived, not drawn: adding it left every world as it was). */
const SITES: Record<
  string,
  { city: string; countryCode: string; stateCode: string; zipCode: string; latitude: string; longitude: string }
> = {
  'us-west': {
    city: 'Sacramento',
    countryCode: 'US',
    stateCode: 'CA',
    zipCode: '95814',
    latitude: '38.58',
    longitude: '-121.49',
  },
  'eu-west': {
    city: 'Dublin',
    countryCode: 'IE',
    stateCode: 'D',
    zipCode: 'D02',
    latitude: '53.35',
    longitude: '-6.26',
  },
  'eu-central': {
    city: 'Frankfurt',
    countryCode: 'DE',
    stateCode: 'HE',
    zipCode: '60311',
    latitude: '50.11',
    longitude: '8.68',
  },
  'ap-northeast': {
    city: 'Tokyo',
    countryCode: 'JP',
    stateCode: '13',
    zipCode: '100-0001',
    latitude: '35.68',
    longitude: '139.69',
  },
};

function generateCatalogs(rng: Rng, customerId: string): Catalog[] {
  return CATALOG_VERSIONS.map(({ version, releaseDate }, index) => {
    const record = generatedRecord(rng, 'system-software-catalog', 400);
    const minor = index + 2;
    return {
      ...record,
      name: index === 0 ? '' : `Software catalog ${version}`,
      customerId,
      resourceUri: `${BASE}/system-software-catalogs/${record.id}`,
      version,
      releaseDate,
      eula: `https://eula.example.com/catalogs/${version}.html`,
      hypervisor: component('hypervisor', `8.0.${minor}`, releaseDate),
      hypervisorManager: component('hypervisor-manager', `8.0.${minor}.1`, releaseDate),
      serverFirmware: component('server-firmware', `${2024 + index}.0${minor}.0`, releaseDate),
      storageConnectionManager: component('storage-connection-manager', `3.${minor}.0`, releaseDate),
      storageSoftware: component('storage-software', `6.1.${minor}`, releaseDate),
    };
  });
}

/** The variety of the default world, by system index modulo 6. */
const PROFILES = [
  { state: 'ONLINE', updateSupported: true, version: '2.2.0', unavailableOnLast: false },
  { state: 'OFFLINE', updateSupported: true, version: '2.3.1', unavailableOnLast: false },
  { state: 'ONLINE', updateSupported: true, version: '2.3.1', unavailableOnLast: false },
  { state: 'ONLINE', updateSupported: true, version: '2.2.0', unavailableOnLast: true },
  { state: 'ONLINE', updateSupported: true, version: '2.4.0', unavailableOnLast: false },
  { state: 'ONLINE', updateSupported: false, version: '2.3.1', unavailableOnLast: false },
] as const;

function generateServer(rng: Rng, system: System, cluster: Cluster, index: number, customerId: string): Server {
  const record = generatedRecord(rng, 'hci-server', 600);
  const name = `${system.name}-${cluster.name}-srv${index + 1}`;
  const octet = rng.int(10, 250);
  return {
    ...record,
    name,
    customerId,
    resourceUri: `${BASE}/systems/${system.id}/servers/${record.id}`,
    systemId: system.id,
    serialNumber: `SRV${rng.int(100_000_000, 999_999_999)}`,
    model: rng.pick(['HC-380 Gen11', 'HC-360 Gen11', 'HC-380 Gen10 Plus']),
    powerState: 'ON',
    memoryGib: String(rng.pick([256, 384, 512, 768])),
    processorCount: String(rng.pick([1, 2])),
    processorModel: rng.pick(['Processor 6430 32-core', 'Processor 5418Y 24-core']),
    ncmVersion: `1.${rng.int(2, 6)}.${rng.int(0, 9)}`,
    indicatorLedStatus: 'OFF',
    bmcFirmwareVersion: `1.${rng.int(50, 70)}`,
    bmcState: 'ENABLED',
    bmcStatus: 'OK',
    bmcNetworkInfo: {
      gateway: '10.20.0.1',
      bmcHostname: `bmc-${name}`,
      bmcIp: `10.20.${index}.${octet}`,
      network: rng.next() < 0.2 ? '' : '10.20.0.0',
      subnetMask: '255.255.0.0',
    },
    maintenanceMode: false,
    hypervisorHost: {
      resourceUri: `/virtualization/v1beta1/hypervisor-hosts/${record.id}`,
      hypervisorClusterId: cluster.id,
      hypervisorClusterName: cluster.name,
      hypervisorHostIp: `10.30.${index}.${octet}`,
      id: rng.uuid(),
      name: `host-${name}`,
      type: cluster.type,
    },
    health: {
      agentlessManagementService: 'READY',
      biosOrHardwareHealth: 'OK',
      fanHealth: 'OK',
      fanRedundancy: 'REDUNDANT',
      hbLastUpdateTimestamp: 'Sun Jun  1 00:00:00 2025',
      memoryHealth: 'OK',
      networkHealth: 'OK',
      overallServerHealth: 'OK',
      powerState: rng.next() < 0.2 ? '' : 'ON',
      powerSuppliesHealth: 'OK',
      powerSuppliesRedundancy: 'REDUNDANT',
      processorHealth: 'OK',
      smartStorageBatteryHealth: 'OK',
      storageHealth: 'OK',
      temperaturesHealth: 'OK',
    },
  };
}

function generateSystem(rng: Rng, index: number, customerId: string, clustersPerSystem?: number): System {
  const profile = PROFILES[index % PROFILES.length]!;
  const region = REGIONS[index % REGIONS.length]!;
  const record = generatedRecord(rng, 'hci-cluster', 700);
  const serverPlan: Array<{ cluster: Cluster; count: number }> = [];
  const serverRng = rng.fork(`servers:${record.id}`);
  let servers: Server[] | undefined;
  const system: System = {
    ...record,
    name: `hci-${region}-${String(index + 1).padStart(2, '0')}`,
    customerId,
    resourceUri: `${BASE}/systems/${record.id}`,
    region,
    state: profile.state,
    stackType: profile.updateSupported ? 'HCI_APPLIANCE' : 'DHCI',
    updateSupported: profile.updateSupported,
    healthStatus: profile.state === 'OFFLINE' ? 'MISSING' : rng.next() < 0.8 ? 'OK' : 'WARNING',
    clusters: [],
    hypervisorManager: {
      id: `hm-${record.id}`,
      name: `hm-${region}-${String(index + 1).padStart(2, '0')}`,
      address: `10.10.${index % 250}.10`,
    },
    location: SITES[region]!,
    capacity: { cpuMhz: 0, memoryBytes: 0, storageBytes: 0 },
    serverCount: 0,
    get servers() {
      servers ??= serverPlan.flatMap(({ cluster, count }) =>
        Array.from({ length: count }, (_, s) => generateServer(serverRng, system, cluster, s, customerId)),
      );
      return servers;
    },
  };
  const clusterCount = clustersPerSystem ?? rng.int(2, 4);
  for (let c = 0; c < clusterCount; c += 1) {
    const cluster: Cluster = {
      id: rng.uuid(),
      name: `cluster-${String.fromCharCode(97 + c)}`,
      type: 'HYPERVISOR_TYPE_STANDARD',
      currentVersion: profile.version,
      unavailable: [],
    };
    if (!profile.updateSupported) {
      cluster.unavailable = CATALOG_VERSIONS.filter((v) => compareVersions(v.version, profile.version) > 0).map(
        (v) => ({
          version: v.version,
          reasons: ['Software updates are not supported for this system family'],
        }),
      );
    } else if (profile.unavailableOnLast && c === clusterCount - 1) {
      cluster.unavailable = [
        {
          version: '2.4.0',
          reasons: ['Server firmware baseline of catalog 2.4.0 does not support the installed server model'],
        },
      ];
    }
    system.clusters.push(cluster);
    const count = rng.int(2, 4);
    serverPlan.push({ cluster, count });
    system.serverCount += count;
  }
  // Per server: 2 × 32 cores at 2.4 GHz, 512 GiB; 20 TB of storage.
  system.capacity = {
    cpuMhz: system.serverCount * 64 * 2400,
    memoryBytes: system.serverCount * 512 * 2 ** 30,
    storageBytes: system.serverCount * 20e12,
  };
  return system;
}

function generatePolicies(rng: Rng, customerId: string, systems: readonly System[]): Policy[] {
  const specs = [
    // dHCI: the one storage type the platform publishes.
    { name: 'gold-thin-encrypted', storageType: 'dHCI', iops: 50_000, dedupe: true },
    { name: 'silver-thin', storageType: 'dHCI', iops: 20_000, dedupe: true },
    { name: 'bronze-file', storageType: 'dHCI', iops: 5_000, dedupe: false },
  ];
  return specs.map((spec) => {
    const record = generatedRecord(rng, 'vm-provisioning-policy', 300);
    const system = systems.length > 0 ? rng.pick(systems) : undefined;
    const cluster = system?.clusters[0];
    return {
      ...record,
      name: spec.name,
      customerId,
      resourceUri: `${BASE}/vm-provisioning-policies/${record.id}`,
      description: `${spec.name}: ${spec.dedupe ? 'deduplicated' : 'plain'} volumes, ${spec.iops} IOPS limit`,
      storageType: spec.storageType,
      performancePolicy: { id: rng.uuid() },
      protectionPolicy: {
        id: rng.uuid(),
        name: `${spec.name}-protection`,
        description: 'Daily snapshots kept for two weeks',
        effectiveFromDateTime: '2025-01-01T00:00:00.000Z',
        overrides: { backupGranularity: 'VOLUME', consistency: 'APPLICATION' },
      },
      volumeInfo: {
        allFlash: spec.dedupe,
        conversionType: 'CONVERSIONTYPE_THIN',
        dataReduction: spec.dedupe,
        deduplication: spec.dedupe,
        encryption: { cipher: 'AES_256_XTS', provider: 'array', scope: 'Volume' },
        qos: { perfIopsLimit: spec.iops, perfMbpsLimit: spec.iops / 50 },
        snapshotAllocWarning: 80,
        userAllocWarning: 90,
      },
      associatedObjects:
        cluster && system
          ? [
              {
                generation: 1,
                resourceUri: `${system.resourceUri}/hypervisor-clusters/${cluster.id}`,
                type: 'hypervisor-cluster',
                associatedDatastores: [{ id: rng.uuid(), name: `ds-${spec.name}`, type: 'DATASTORE_TYPE_VMFS' }],
                associatedVmCount: 2,
                associatedVms: [
                  { id: rng.uuid(), name: `vm-${spec.name}-1` },
                  { id: rng.uuid(), name: `vm-${spec.name}-2` },
                ],
                storageProfileId: rng.uuid(),
                clusterId: cluster.id,
                clusterName: cluster.name,
              },
            ]
          : [],
    };
  });
}

function resolveFailures(config: PrivateCloudConfig, systems: readonly System[]): PinnedFailure[] {
  const first = systems[0];
  const pinned =
    config.failures ??
    (first
      ? [
          {
            system: first.name,
            cluster: first.clusters[0]?.name,
            operation: 'update' as const,
            step: 'hypervisor' as const,
            times: 1,
          },
        ]
      : []);
  return pinned.map((failure, index) => {
    const system = systems.find((s) => s.name === failure.system || s.id === failure.system);
    if (!system) {
      throw new UsageError(
        `world file: privateCloud.failures[${index}].system '${failure.system}' is not a system of this world (e.g. ${systems
          .slice(0, 3)
          .map((s) => s.name)
          .join(', ')})`,
        'INVALID_WORLD_FILE',
      );
    }
    const cluster =
      failure.cluster === undefined
        ? undefined
        : system.clusters.find((c) => c.name === failure.cluster || c.id === failure.cluster);
    if (failure.cluster !== undefined && !cluster) {
      throw new UsageError(
        `world file: privateCloud.failures[${index}].cluster '${failure.cluster}' is not a cluster of ${system.name} (${system.clusters.map((c) => c.name).join(', ')})`,
        'INVALID_WORLD_FILE',
      );
    }
    return {
      systemId: system.id,
      ...(cluster ? { clusterId: cluster.id } : {}),
      operation: failure.operation,
      ...(failure.step ? { step: failure.step } : {}),
      remaining: failure.times ?? 1,
    };
  });
}

/** The seeded private cloud world (see the brief's default world); fast enough for thousands of systems. */
export function generatePrivateCloud(rng: Rng, config: PrivateCloudConfig): PrivateCloudState {
  const customerId = rng.uuid().replace(/-/g, '').slice(0, 16);
  const catalogs = generateCatalogs(rng.fork('catalogs'), customerId);
  const systemRng = rng.fork('systems');
  const systems = Array.from({ length: config.systems ?? 6 }, (_, index) =>
    generateSystem(systemRng, index, customerId, config.clustersPerSystem),
  );
  return {
    customerId,
    systems,
    systemsById: new Map(systems.map((system) => [system.id, system])),
    catalogs,
    policies: generatePolicies(rng.fork('policies'), customerId, systems),
    reports: [],
    failures: resolveFailures(config, systems),
    degradeAfterUpdate: resolveDegrade(config, systems),
    precheckValidityMs: (config.precheckValidityMinutes ?? 240) * 60_000,
  };
}

/** The world file's `degradeAfterUpdate`, its system names resolved to ids (an unknown one refused). */
function resolveDegrade(config: PrivateCloudConfig, systems: readonly System[]): HealthDegrade {
  const given = config.degradeAfterUpdate ?? {};
  const pinned = (given.systems ?? []).map((name, index) => {
    const system = systems.find((s) => s.name === name || s.id === name);
    if (!system)
      throw new UsageError(
        `world file: privateCloud.degradeAfterUpdate.systems[${index}] '${name}' is not a system of this world (e.g. ${systems
          .slice(0, 3)
          .map((s) => s.name)
          .join(', ')})`,
        'INVALID_WORLD_FILE',
      );
    return system.id;
  });
  return { pinned: new Set(pinned), probability: given.probability ?? 0, to: given.to ?? 'CRITICAL' };
}
