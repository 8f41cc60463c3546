/**
 * System views serialized once and reused while nothing they show can have changed. A system
 * renders to about 10 KB of JSON (its clusters' software info with every catalog's versions),
 * so a page of 10 stringified on every read bounded the paged list at under 2,000 requests/s;
 * reused text is only joined into the page.
 */
import { systemView, systemViewStableUntil } from './views.js';
import type { PrivateCloudState, System } from './model.js';

export interface SystemViewCache {
  /** The system's view at `nowMs` as JSON: the same as `JSON.stringify(systemView(...))`. */
  json(system: System, nowMs: number): string;
  /** Something a view shows may have changed (a write, an operation's end): every view renders again. */
  invalidate(): void;
}

interface Entry {
  json: string;
  generation: number;
  renderedAtMs: number;
  stableUntilMs: number;
}

/** `render` is `systemView` but in tests, which count the renderings. */
export function createSystemViewCache(state: PrivateCloudState, render = systemView): SystemViewCache {
  let generation = 0;
  const entries = new WeakMap<System, Entry>();
  return {
    json(system, nowMs) {
      const entry = entries.get(system);
      // The clock may be set back (a test's world time): only the span rendered for is trusted.
      if (entry && entry.generation === generation && nowMs >= entry.renderedAtMs && nowMs < entry.stableUntilMs)
        return entry.json;
      const json = JSON.stringify(render(state, system, nowMs));
      const stableUntilMs = systemViewStableUntil(system, nowMs);
      if (stableUntilMs > nowMs) entries.set(system, { json, generation, renderedAtMs: nowMs, stableUntilMs });
      else entries.delete(system);
      return json;
    },
    invalidate() {
      generation += 1;
    },
  };
}

/**
 * The list envelope (`listPage`'s shape, in its key order) around items already serialized.
 * A string, not a Buffer: a page is ~100 KB, and as many fresh Buffers outside the heap made
 * V8 run full collections of the whole world for external memory pressure, where a string is
 * young-generation garbage.
 */
export function pageJson(items: readonly string[], envelope: { count: number; offset: number; total: number }): string {
  return `{"items":[${items.join(',')}],"count":${envelope.count},"offset":${envelope.offset},"total":${envelope.total}}`;
}
