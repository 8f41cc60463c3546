import { describe, expect, it } from 'vitest';
import { createRng } from '../../rng.js';
import { generatePrivateCloud } from './generate.js';
import { VERSION_REFRESH_INTERVAL_MS, type PrivateCloudState } from './model.js';
import { createSystemViewCache, type SystemViewCache } from './view-cache.js';
import { systemView } from './views.js';

const DAY = VERSION_REFRESH_INTERVAL_MS;
const NOW = Date.parse('2026-11-25T10:00:00Z');

/** A world of 3 systems and a cache that counts how often it renders a view. */
function world(pageCacheBytes?: number) {
  const state = generatePrivateCloud(createRng(3).fork('area:privateCloud'), { systems: 3 });
  let renders = 0;
  const cache = createSystemViewCache(
    state,
    (...args) => {
      renders += 1;
      return systemView(...args);
    },
    pageCacheBytes,
  );
  return { state, system: state.systems[0]!, cache, renders: () => renders };
}

/** What `JSON.stringify` of the page's envelope gives when every view is rendered afresh. */
function freshPage(state: PrivateCloudState, offset: number, count: number, nowMs: number): string {
  const items = state.systems.slice(offset, offset + count).map((system) => systemView(state, system, nowMs));
  return JSON.stringify({ items, count: items.length, offset, total: state.systems.length });
}

describe('system view cache', () => {
  it('answers the rendered view, and renders it once while nothing changed', () => {
    const { state, system, cache, renders } = world();
    expect(JSON.parse(cache.json(system, NOW).toString())).toEqual(systemView(state, system, NOW));
    cache.json(system, NOW + 60_000);
    expect(renders()).toBe(1);
  });

  it('renders again after a write, at the next scheduled refresh, and when the clock is set back', () => {
    const { state, system, cache, renders } = world();
    cache.json(system, NOW);
    system.name = 'renamed';
    expect(JSON.parse(cache.json(system, NOW).toString()).name).not.toBe('renamed');
    cache.invalidate();
    expect(JSON.parse(cache.json(system, NOW).toString()).name).toBe('renamed');
    expect(renders()).toBe(2);

    const nextRefresh = (Math.floor(NOW / DAY) + 1) * DAY;
    cache.json(system, nextRefresh - 1);
    expect(renders()).toBe(2);
    expect(JSON.parse(cache.json(system, nextRefresh).toString()).softwareInfo.versionsRefreshedAt).toBe(
      new Date(nextRefresh).toISOString(),
    );
    expect(renders()).toBe(3);
    expect(JSON.parse(cache.json(system, NOW).toString())).toEqual(systemView(state, system, NOW));
    expect(renders()).toBe(4);
  });

  it('renders again once a precheck expires, and on every read while an operation runs', () => {
    const { state, system, cache, renders } = world();
    const cluster = system.clusters[0]!;
    cluster.precheck = { catalogVersion: state.catalogs.at(-1)!.version, validUntilMs: NOW + 1_000 };
    expect(JSON.parse(cache.json(system, NOW).toString()).softwareInfo.precheckValidUntil).toBeDefined();
    expect(JSON.parse(cache.json(system, NOW + 1_000).toString()).softwareInfo.precheckValidUntil).toBeUndefined();
    expect(renders()).toBe(2);

    system.active = { kind: 'software-version-refresh', clusterIds: [] };
    cache.invalidate();
    cache.json(system, NOW + 2_000);
    cache.json(system, NOW + 2_000);
    expect(renders()).toBe(4);
  });
});

describe('kept pages', () => {
  /** The page of `count` systems from `offset` of the whole fleet, as the list handler asks for it. */
  const pageOf = (cache: SystemViewCache, state: PrivateCloudState, offset: number, count: number, nowMs: number) =>
    cache.page('', state.systems.slice(offset, offset + count), { count, offset, total: state.systems.length }, nowMs);

  it('answers the bytes a fresh rendering gives, then the same Buffer while nothing changed', () => {
    const { state, cache, renders } = world();
    const first = pageOf(cache, state, 1, 2, NOW);
    expect(first.toString('utf8')).toBe(freshPage(state, 1, 2, NOW));
    expect(renders()).toBe(2);
    expect(pageOf(cache, state, 1, 2, NOW + 60_000)).toBe(first);
    // The page's views are kept (as slices of its bytes): a read of one renders nothing.
    expect(cache.json(state.systems[2]!, NOW).toString('utf8')).toBe(
      JSON.stringify(systemView(state, state.systems[2]!, NOW)),
    );
    expect(renders()).toBe(2);
    // Another page is another key; its views already rendered are reused.
    expect(pageOf(cache, state, 0, 3, NOW).toString('utf8')).toBe(freshPage(state, 0, 3, NOW));
    expect(renders()).toBe(3);
  });

  it('renders again after a write, at the next scheduled refresh, and when the clock is set back', () => {
    const { state, system, cache } = world();
    const first = pageOf(cache, state, 0, 2, NOW);
    system.clusters[0]!.currentVersion = state.catalogs.at(-1)!.version;
    expect(pageOf(cache, state, 0, 2, NOW)).toBe(first);
    cache.invalidate();
    const written = pageOf(cache, state, 0, 2, NOW).toString('utf8');
    expect(written).not.toBe(first.toString('utf8'));
    expect(written).toBe(freshPage(state, 0, 2, NOW));

    const nextRefresh = (Math.floor(NOW / DAY) + 1) * DAY;
    expect(pageOf(cache, state, 0, 2, nextRefresh).toString('utf8')).toBe(freshPage(state, 0, 2, nextRefresh));
    expect(pageOf(cache, state, 0, 2, NOW).toString('utf8')).toBe(freshPage(state, 0, 2, NOW));
  });

  it('answers an empty page (an offset past the end) as JSON.stringify would', () => {
    const { state, cache } = world();
    expect(pageOf(cache, state, 3, 0, NOW).toString('utf8')).toBe(
      JSON.stringify({ items: [], count: 0, offset: 3, total: 3 }),
    );
  });

  it('is not kept while a system of it has an operation running', () => {
    const { state, system, cache, renders } = world();
    system.active = { kind: 'software-version-refresh', clusterIds: [] };
    const first = pageOf(cache, state, 0, 2, NOW);
    const second = pageOf(cache, state, 0, 2, NOW);
    expect(second).not.toBe(first);
    expect(second.toString('utf8')).toBe(freshPage(state, 0, 2, NOW));
    // The other system's view is still reused: only the running one renders on every read.
    expect(renders()).toBe(3);
  });

  it('drops the oldest pages beyond its byte budget, answering them afresh', () => {
    const probe = world();
    const pageBytes = pageOf(probe.cache, probe.state, 0, 1, NOW).length;
    const { state, cache } = world(pageBytes * 2.5);
    const pages = [0, 1, 2].map((offset) => pageOf(cache, state, offset, 1, NOW));
    expect(pageOf(cache, state, 2, 1, NOW)).toBe(pages[2]);
    expect(pageOf(cache, state, 1, 1, NOW)).toBe(pages[1]);
    const again = pageOf(cache, state, 0, 1, NOW);
    expect(again).not.toBe(pages[0]);
    expect(again.toString('utf8')).toBe(freshPage(state, 0, 1, NOW));
  });
});
