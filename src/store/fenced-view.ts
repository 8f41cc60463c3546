import type { RunStore } from './types.js';

/**
 * `store` as the holder of claim `fence` on `runId` sees it: its journal appends, status
 * changes and resume marks of that run carry the token, so the store refuses them
 * (`STALE_FENCE`) once another worker has claimed the run. The engine is given this view and
 * needs to know nothing of claims. Everything else passes through.
 */
export function fencedView(store: RunStore, runId: string, fence: number): RunStore {
  const fenceOf = (id: string) => (id === runId ? { fence } : {});
  return {
    ...store,
    append: (id, event, options) => store.append(id, event, { ...options, ...fenceOf(id) }),
    setRunStatus: (id, status, result, options) =>
      store.setRunStatus(id, status, result, { ...options, ...fenceOf(id) }),
    markResumed: (id, options) => store.markResumed(id, { ...options, ...fenceOf(id) }),
    suspendRun: (id, wait, options) => store.suspendRun(id, wait, { ...options, ...fenceOf(id) }),
  };
}
