import { describe, expect, it } from 'vitest';
import { createRng } from '../../rng.js';
import { generatePrivateCloud } from './generate.js';
import { VERSION_REFRESH_INTERVAL_MS } from './model.js';
import { createSystemViewCache, pageJson } from './view-cache.js';
import { systemView } from './views.js';

const DAY = VERSION_REFRESH_INTERVAL_MS;
const NOW = Date.parse('2026-11-25T10:00:00Z');

function world() {
  const state = generatePrivateCloud(createRng(3).fork('area:privateCloud'), { systems: 3 });
  return { state, system: state.systems[0]!, cache: createSystemViewCache(state) };
}

describe('system view cache', () => {
  it('answers the bytes of the rendered view, and the same bytes again while nothing changed', () => {
    const { state, system, cache } = world();
    const first = cache.json(system, NOW);
    expect(JSON.parse(first.toString('utf8'))).toEqual(systemView(state, system, NOW));
    expect(cache.json(system, NOW + 60_000)).toBe(first);
  });

  it('renders again after a write, at the next scheduled refresh, and when the clock is set back', () => {
    const { state, system, cache } = world();
    const first = cache.json(system, NOW);
    system.name = 'renamed';
    expect(cache.json(system, NOW)).toBe(first);
    cache.invalidate();
    const renamed = cache.json(system, NOW);
    expect(JSON.parse(renamed.toString('utf8')).name).toBe('renamed');

    const nextRefresh = (Math.floor(NOW / DAY) + 1) * DAY;
    expect(cache.json(system, nextRefresh - 1)).toBe(renamed);
    const refreshed = cache.json(system, nextRefresh);
    expect(refreshed).not.toBe(renamed);
    expect(JSON.parse(refreshed.toString('utf8')).softwareInfo.versionsRefreshedAt).toBe(
      new Date(nextRefresh).toISOString(),
    );
    expect(cache.json(system, NOW)).not.toBe(refreshed);
    expect(JSON.parse(cache.json(system, NOW).toString('utf8'))).toEqual(systemView(state, system, NOW));
  });

  it('renders again once a precheck expires, and on every read while an operation runs', () => {
    const { state, system, cache } = world();
    const cluster = system.clusters[0]!;
    cluster.precheck = { catalogVersion: state.catalogs.at(-1)!.version, validUntilMs: NOW + 1_000 };
    cache.invalidate();
    const valid = cache.json(system, NOW);
    expect(JSON.parse(valid.toString('utf8')).softwareInfo.precheckValidUntil).toBeDefined();
    const expired = cache.json(system, NOW + 1_000);
    expect(JSON.parse(expired.toString('utf8')).softwareInfo.precheckValidUntil).toBeUndefined();

    system.active = { kind: 'software-version-refresh', clusterIds: [] };
    cache.invalidate();
    expect(cache.json(system, NOW)).not.toBe(cache.json(system, NOW));
  });

  it('wraps serialized items in the list envelope as JSON.stringify would', () => {
    const items = [{ a: 1 }, { b: 'two' }];
    const json = pageJson(
      items.map((item) => Buffer.from(JSON.stringify(item))),
      { count: 2, offset: 4, total: 9 },
    );
    expect(json.toString('utf8')).toBe(JSON.stringify({ items, count: 2, offset: 4, total: 9 }));
    expect(pageJson([], { count: 0, offset: 0, total: 0 }).toString('utf8')).toBe(
      JSON.stringify({ items: [], count: 0, offset: 0, total: 0 }),
    );
  });
});
