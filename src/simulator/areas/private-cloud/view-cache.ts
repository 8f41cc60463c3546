/**
 * System views serialized once and reused while nothing they show can have changed. A system
 * renders to about 10 KB of JSON (its clusters' software info with every catalog's versions),
 * so a page of 10 stringified on every read bounded the paged list at under 2,000 requests/s;
 * reused bytes are only copied into the page.
 */
import { systemView, systemViewStableUntil } from './views.js';
import type { PrivateCloudState, System } from './model.js';

export interface SystemViewCache {
  /** The system's view at `nowMs` as JSON bytes: the same as `JSON.stringify(systemView(...))`. */
  json(system: System, nowMs: number): Buffer;
  /** Something a view shows may have changed (a write, an operation's end): every view renders again. */
  invalidate(): void;
}

interface Entry {
  json: Buffer;
  generation: number;
  renderedAtMs: number;
  stableUntilMs: number;
}

export function createSystemViewCache(state: PrivateCloudState): SystemViewCache {
  let generation = 0;
  const entries = new WeakMap<System, Entry>();
  return {
    json(system, nowMs) {
      const entry = entries.get(system);
      // The clock may be set back (a test's world time): only the span rendered for is trusted.
      if (entry && entry.generation === generation && nowMs >= entry.renderedAtMs && nowMs < entry.stableUntilMs)
        return entry.json;
      const json = Buffer.from(JSON.stringify(systemView(state, system, nowMs)));
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

const ITEMS_OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** The list envelope (`listPage`'s shape, in its key order) around items already serialized. */
export function pageJson(items: readonly Buffer[], envelope: { count: number; offset: number; total: number }): Buffer {
  const parts: Buffer[] = [ITEMS_OPEN];
  items.forEach((item, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(`],"count":${envelope.count},"offset":${envelope.offset},"total":${envelope.total}}`));
  return Buffer.concat(parts);
}
