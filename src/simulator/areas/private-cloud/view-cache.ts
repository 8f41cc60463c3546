/**
 * System views serialized once and reused while nothing they show can have changed. A system
 * renders to about 10 KB of JSON (its clusters' software info with every catalog's versions),
 * so a page of 10 stringified on every read bounded the paged list at under 2,000 requests/s.
 *
 * Views and whole unfiltered pages are kept as the bytes written (UTF-8 Buffers): a page of
 * views kept as strings (~100 KB) still cost joining ten strings, fastify measuring the
 * string's UTF-8 length and the socket write encoding it again, on every request. A page
 * renders its missing views straight into its own Buffer and keeps them as slices of it, so
 * the bytes are held once for the page and its views, in one allocation (views kept as strings
 * beside the pages held them twice).
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
  /** The system's view at `nowMs` as UTF-8 JSON: the same bytes as `JSON.stringify(systemView(...))`. */
  json(system: System, nowMs: number): Buffer;
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
 * Kept pages stop growing here (oldest dropped first): 5,000 systems in pages of ten are ~51 MB.
 * A dropped page's bytes stay while views sliced from it are kept; the budget bounds the copies
 * of views a page took from elsewhere (views rendered alone, pages that overlap).
 */
export const PAGE_CACHE_BYTES = 64 * 1024 * 1024;

/** One system's place in a page: its kept view's bytes, or its view just rendered to text. */
interface PagePart {
  system: System;
  kept: Buffer | undefined;
  text: string;
  /** The view's length in UTF-8 bytes. */
  bytes: number;
  stableUntilMs: number;
}

/**
 * The page in the list envelope (`listPage`'s shape, in its key order), written into one Buffer
 * of the exact size; `rendered` gets each newly rendered view as its slice of it.
 */
function writePage(
  parts: readonly PagePart[],
  envelope: PageEnvelope,
  rendered: (part: PagePart, bytes: Buffer) => void,
): Buffer {
  const head = '{"items":[';
  const tail = `],"count":${envelope.count},"offset":${envelope.offset},"total":${envelope.total}}`;
  const size =
    head.length + parts.reduce((sum, part) => sum + part.bytes, 0) + Math.max(parts.length - 1, 0) + tail.length;
  const value = Buffer.allocUnsafe(size);
  let at = value.write(head, 0, 'latin1');
  parts.forEach((part, index) => {
    if (index > 0) at += value.write(',', at, 'latin1');
    if (part.kept) at += part.kept.copy(value, at);
    else {
      at += value.write(part.text, at, 'utf8');
      rendered(part, value.subarray(at - part.bytes, at));
    }
  });
  value.write(tail, at, 'latin1');
  return value;
}

/** `render` is `systemView` but in tests, which count the renderings. */
export function createSystemViewCache(
  state: PrivateCloudState,
  render = systemView,
  pageCacheBytes = PAGE_CACHE_BYTES,
): SystemViewCache {
  let generation = 0;
  const views = new WeakMap<System, Rendered<Buffer>>();
  const pages = new Map<string, Rendered<Buffer>>();
  let pageBytes = 0;
  // The clock may be set back (a test's world time): only the span rendered for is trusted.
  const current = <T>(kept: Rendered<T> | undefined, nowMs: number): kept is Rendered<T> =>
    kept !== undefined && kept.generation === generation && nowMs >= kept.renderedAtMs && nowMs < kept.stableUntilMs;

  const keep = (system: System, value: Buffer, nowMs: number, stableUntilMs: number): void => {
    if (stableUntilMs > nowMs) views.set(system, { value, generation, renderedAtMs: nowMs, stableUntilMs });
    else views.delete(system);
  };

  const forgetPage = (key: string): void => {
    const kept = pages.get(key);
    if (!kept) return;
    pageBytes -= kept.value.length;
    pages.delete(key);
  };

  const keepPage = (key: string, value: Buffer, nowMs: number, stableUntilMs: number): void => {
    if (stableUntilMs <= nowMs || value.length > pageCacheBytes) return;
    for (const oldest of pages.keys()) {
      if (pageBytes + value.length <= pageCacheBytes) break;
      forgetPage(oldest);
    }
    pages.set(key, { value, generation, renderedAtMs: nowMs, stableUntilMs });
    pageBytes += value.length;
  };

  /**
   * The page's bytes in one Buffer: kept views copied, the others rendered into it, and kept
   * as slices of it (one copy of the bytes for the page and its views, one allocation).
   */
  const renderPage = (systems: readonly System[], envelope: PageEnvelope, nowMs: number) => {
    let stableUntilMs = Infinity;
    const parts = systems.map((system): PagePart => {
      const kept = views.get(system);
      if (current(kept, nowMs)) {
        stableUntilMs = Math.min(stableUntilMs, kept.stableUntilMs);
        return { system, kept: kept.value, text: '', bytes: kept.value.length, stableUntilMs: kept.stableUntilMs };
      }
      const text = JSON.stringify(render(state, system, nowMs));
      const viewStableUntilMs = systemViewStableUntil(system, nowMs);
      stableUntilMs = Math.min(stableUntilMs, viewStableUntilMs);
      return { system, kept: undefined, text, bytes: Buffer.byteLength(text), stableUntilMs: viewStableUntilMs };
    });
    const value = writePage(parts, envelope, (part, bytes) => keep(part.system, bytes, nowMs, part.stableUntilMs));
    return { value, stableUntilMs };
  };

  return {
    json(system, nowMs) {
      const kept = views.get(system);
      if (current(kept, nowMs)) return kept.value;
      const value = Buffer.from(JSON.stringify(render(state, system, nowMs)));
      keep(system, value, nowMs, systemViewStableUntil(system, nowMs));
      return value;
    },
    page(region, systems, envelope, nowMs) {
      const key = `${region}\n${envelope.offset}\n${envelope.count}\n${envelope.total}`;
      const kept = pages.get(key);
      if (current(kept, nowMs)) return kept.value;
      forgetPage(key);
      const { value, stableUntilMs } = renderPage(systems, envelope, nowMs);
      keepPage(key, value, nowMs, stableUntilMs);
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
