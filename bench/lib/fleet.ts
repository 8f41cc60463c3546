/** The simulator's systems as benchmarks pick them: every region, with what decides eligibility. */
import type { PlatformClient } from '../../src/api/index.js';

export const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'] as const;

export interface FleetSystem {
  id: string;
  name: string;
  region: string;
  state: string;
  updateSupported: boolean;
  clusterIds: string[];
  /** Every cluster offers this catalog version. */
  offers(version: string): boolean;
}

interface SystemView {
  id: string;
  name: string;
  region: string;
  state: string;
  updateSupported: boolean;
  softwareInfo: { hypervisorClusters: Array<{ id: string; availableSoftwareCatalogs: Array<{ version: string }> }> };
}

/** Every system of every region, in listing order. */
export async function listFleet(client: PlatformClient): Promise<FleetSystem[]> {
  const fleet: FleetSystem[] = [];
  for (const region of REGIONS) {
    for await (const item of client.paginate('privateCloud.listSystems', { limit: 100 }, { region })) {
      const view = item as unknown as SystemView;
      const clusters = view.softwareInfo.hypervisorClusters;
      fleet.push({
        id: view.id,
        name: view.name,
        region: view.region,
        state: view.state,
        updateSupported: view.updateSupported,
        clusterIds: clusters.map((cluster) => cluster.id),
        offers: (version) =>
          clusters.every((cluster) => cluster.availableSoftwareCatalogs.some((catalog) => catalog.version === version)),
      });
    }
  }
  return fleet;
}

/** Maps the simulator's clock to ours: simulated ms → `Date.now()` ms. */
export async function simulatedToReal(url: string): Promise<(simulatedMs: number) => number> {
  const before = Date.now();
  const clock = (await (await fetch(`${url}/_sim/clock`)).json()) as { nowMs: number; timeScale: number };
  const realAt = (before + Date.now()) / 2;
  return (simulatedMs) => realAt + (simulatedMs - clock.nowMs) / clock.timeScale;
}
