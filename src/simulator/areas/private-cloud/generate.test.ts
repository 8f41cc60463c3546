import { describe, expect, it } from 'vitest';
import { createRng } from '../../rng.js';
import { generatePrivateCloud } from './generate.js';

describe('generatePrivateCloud', () => {
  it('generates servers on first read, the same for the same seed, as many as serverCount says', () => {
    const first = generatePrivateCloud(createRng(5).fork('area:privateCloud'), { systems: 50 });
    const second = generatePrivateCloud(createRng(5).fork('area:privateCloud'), { systems: 50 });
    // Reading in another order gives the same servers: each system draws from its own fork.
    const late = second.systems.at(-1)!;
    expect(late.servers).toEqual(first.systems.at(-1)!.servers);
    for (const [index, system] of first.systems.entries()) {
      expect(system.servers).toHaveLength(system.serverCount);
      expect(system.servers).toBe(system.servers);
      expect(second.systems[index]!.servers.map((server) => server.id)).toEqual(
        system.servers.map((server) => server.id),
      );
      expect(
        new Set(
          system.servers.map(
            (server) => (server.hypervisorHost as { hypervisorClusterId: string }).hypervisorClusterId,
          ),
        ),
      ).toEqual(new Set(system.clusters.map((cluster) => cluster.id)));
    }
  });

  it('gives every system clustersPerSystem clusters when set, 2 to 4 otherwise', () => {
    const drawn = generatePrivateCloud(createRng(7).fork('area:privateCloud'), { systems: 30 });
    const fixed = generatePrivateCloud(createRng(7).fork('area:privateCloud'), { systems: 30, clustersPerSystem: 3 });
    expect(new Set(drawn.systems.map((system) => system.clusters.length)).size).toBeGreaterThan(1);
    expect(fixed.systems.map((system) => system.clusters.length)).toEqual(Array.from({ length: 30 }, () => 3));
  });
});
