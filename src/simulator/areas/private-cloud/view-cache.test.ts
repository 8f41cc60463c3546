import { describe, expect, it } from 'vitest';
import { createRng } from '../../rng.js';
import { generatePrivateCloud } from './generate.js';
import { VERSION_REFRESH_INTERVAL_MS } from './model.js';
import { createSystemViewCache, pageJson } from './view-cache.js';
import { systemView } from './views.js';

const DAY = VERSION_REFRESH_INTERVAL_MS;
const NOW = Date.parse('2026-11-25T10:00:00Z');

/** A world of 3 systems and a cache that counts how often it renders a view. */
function world() {
  const state = generatePrivateCloud(createRng(3).fork('area:privateCloud'), { systems: 3 });
  let renders = 0;
  const cache = createSystemViewCache(state, (...args) => {
    renders += 1;
    return systemView(...args);
  });
  return { state, system: state.systems[0]!, cache, renders: () => renders };
}

describe('system view cache', () => {
  it('answers the rendered view, and renders it once while nothing changed', () => {
    const { state, system, cache, renders } = world();
    expect(JSON.parse(cache.json(system, NOW))).toEqual(systemView(state, system, NOW));
    cache.json(system, NOW + 60_000);
    expect(renders()).toBe(1);
  });

  it('renders again after a write, at the next scheduled refresh, and when the clock is set back', () => {
    const { state, system, cache, renders } = world();
    cache.json(system, NOW);
    system.name = 'renamed';
    expect(JSON.parse(cache.json(system, NOW)).name).not.toBe('renamed');
    cache.invalidate();
    expect(JSON.parse(cache.json(system, NOW)).name).toBe('renamed');
    expect(renders()).toBe(2);

    const nextRefresh = (Math.floor(NOW / DAY) + 1) * DAY;
    cache.json(system, nextRefresh - 1);
    expect(renders()).toBe(2);
    expect(JSON.parse(cache.json(system, nextRefresh)).softwareInfo.versionsRefreshedAt).toBe(
      new Date(nextRefresh).toISOString(),
    );
    expect(renders()).toBe(3);
    expect(JSON.parse(cache.json(system, NOW))).toEqual(systemView(state, system, NOW));
    expect(renders()).toBe(4);
  });

  it('renders again once a precheck expires, and on every read while an operation runs', () => {
    const { state, system, cache, renders } = world();
    const cluster = system.clusters[0]!;
    cluster.precheck = { catalogVersion: state.catalogs.at(-1)!.version, validUntilMs: NOW + 1_000 };
    expect(JSON.parse(cache.json(system, NOW)).softwareInfo.precheckValidUntil).toBeDefined();
    expect(JSON.parse(cache.json(system, NOW + 1_000)).softwareInfo.precheckValidUntil).toBeUndefined();
    expect(renders()).toBe(2);

    system.active = { kind: 'software-version-refresh', clusterIds: [] };
    cache.invalidate();
    cache.json(system, NOW + 2_000);
    cache.json(system, NOW + 2_000);
    expect(renders()).toBe(4);
  });

  it('wraps serialized items in the list envelope as JSON.stringify would', () => {
    const items = [{ a: 1 }, { b: 'two' }];
    const json = pageJson(
      items.map((item) => JSON.stringify(item)),
      { count: 2, offset: 4, total: 9 },
    );
    expect(json).toBe(JSON.stringify({ items, count: 2, offset: 4, total: 9 }));
    expect(pageJson([], { count: 0, offset: 0, total: 0 })).toBe(
      JSON.stringify({ items: [], count: 0, offset: 0, total: 0 }),
    );
  });
});
