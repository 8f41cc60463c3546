/**
 * System views serialized once and reused while nothing they show can have changed. A system
 * renders to about 10 KB of JSON (its clusters' software info with every catalog's versions),
 * so a page of 10 stringified on every read bounded the paged list at under 2,000 requests/s;
 * reused text is only joined into the page.
 *
 * A whole unfiltered page is kept too, as the bytes written: with its views cached, a page of
 * ten (~100 KB) still cost joining ten strings, fastify measuring the string's UTF-8 length and
 * the socket write encoding it again, on every request; a kept Buffer is written as it is.
 */
import { systemView, systemViewStableUntil } from './views.js';
import type { PrivateCloudState, System } from './model.js';

/** The list envelope's numbers (`listPage`'s). */
export interface PageEnvelope {
  count: number;
  offset: number;
  total: number;
}

export interface SystemViewCache {
  /** The system's view at `nowMs` as JSON: the same as `JSON.stringify(systemView(...))`. */
  json(system: System, nowMs: number): string;
  /**
   * A page of `systems` (the page `envelope` describes, of the systems of `region`, `''` for
   * all) in the list envelope at `nowMs`, as UTF-8 JSON: the same bytes as `JSON.stringify` of
   * the envelope with each system's view.
   */
  page(region: string, systems: readonly System[], envelope: PageEnvelope, nowMs: number): Buffer;
  /** Something a view shows may have changed (a write, an operation's end): every view renders again. */
  invalidate(): void;
}

/** What was rendered, and the span of simulated time it is right for. */
interface Rendered<T> {
  value: T;
  generation: number;
  renderedAtMs: number;
  stableUntilMs: number;
}

/**
 * Kept pages stop growing here (oldest dropped first): 5,000 systems in pages of ten are ~51 MB,
 * and a world of 30,000 should not keep another copy of every view on top of the views.
 */
export const PAGE_CACHE_BYTES = 64 * 1024 * 1024;

/** `render` is `systemView` but in tests, which count the renderings. */
export function createSystemViewCache(
  state: PrivateCloudState,
  render = systemView,
  pageCacheBytes = PAGE_CACHE_BYTES,
): SystemViewCache {
  let generation = 0;
  const views = new WeakMap<System, Rendered<string>>();
  const pages = new Map<string, Rendered<Buffer>>();
  let pageBytes = 0;
  // The clock may be set back (a test's world time): only the span rendered for is trusted.
  const current = <T>(kept: Rendered<T> | undefined, nowMs: number): kept is Rendered<T> =>
    kept !== undefined && kept.generation === generation && nowMs >= kept.renderedAtMs && nowMs < kept.stableUntilMs;

  const view = (system: System, nowMs: number): Pick<Rendered<string>, 'value' | 'stableUntilMs'> => {
    const kept = views.get(system);
    if (current(kept, nowMs)) return kept;
    const value = JSON.stringify(render(state, system, nowMs));
    const stableUntilMs = systemViewStableUntil(system, nowMs);
    if (stableUntilMs > nowMs) views.set(system, { value, generation, renderedAtMs: nowMs, stableUntilMs });
    else views.delete(system);
    return { value, stableUntilMs };
  };

  const forgetPage = (key: string): void => {
    const kept = pages.get(key);
    if (!kept) return;
    pageBytes -= kept.value.length;
    pages.delete(key);
  };

  return {
    json: (system, nowMs) => view(system, nowMs).value,
    page(region, systems, envelope, nowMs) {
      const key = `${region}\n${envelope.offset}\n${envelope.count}\n${envelope.total}`;
      const kept = pages.get(key);
      if (current(kept, nowMs)) return kept.value;
      forgetPage(key);
      let stableUntilMs = Infinity;
      const items = systems.map((system) => {
        const rendered = view(system, nowMs);
        stableUntilMs = Math.min(stableUntilMs, rendered.stableUntilMs);
        return rendered.value;
      });
      const value = Buffer.from(pageJson(items, envelope));
      if (stableUntilMs > nowMs && value.length <= pageCacheBytes) {
        for (const oldest of pages.keys()) {
          if (pageBytes + value.length <= pageCacheBytes) break;
          forgetPage(oldest);
        }
        pages.set(key, { value, generation, renderedAtMs: nowMs, stableUntilMs });
        pageBytes += value.length;
      }
      return value;
    },
    invalidate() {
      generation += 1;
      // Nothing kept can be answered again: let the memory go now rather than page by page.
      pages.clear();
      pageBytes = 0;
    },
  };
}

/**
 * The list envelope (`listPage`'s shape, in its key order) around items already serialized.
 */
export function pageJson(items: readonly string[], envelope: PageEnvelope): string {
  return `{"items":[${items.join(',')}],"count":${envelope.count},"offset":${envelope.offset},"total":${envelope.total}}`;
}
