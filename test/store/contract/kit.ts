/** What every facet of the run store contract shares: a hand-moved clock, a new run, a store driving its runs. */
import type { NewRun, RunStore, RunStoreOptions } from '../../../src/store/types.js';

/** A clock the test moves by hand. */
export function manualClock(start = '2026-03-01T10:00:00.000Z') {
  let ms = Date.parse(start);
  return { now: () => new Date(ms), advance: (byMs: number) => (ms += byMs) };
}

export function newRun(id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    playbook: 'rolling-cluster-update',
    playbookSource: 'playbooks/rolling-cluster-update.yaml',
    playbookHash: 'sha256:abc',
    inputs: { catalogVersion: '2.4.0', systemIds: [] },
    secretInputNames: ['webhookToken'],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt: '2026-03-01T10:00:00.000Z',
    ...overrides,
  };
}

/** Longer than any clock move of the suite. */
const DRIVER_TTL_MS = 30 * 86_400_000;

/**
 * `store` whose `createRun` first takes the run's lease, as the engine does: a running run whose
 * lease lapsed or is absent reads `interrupted` (its driver died).
 */
export function driven(store: RunStore): RunStore {
  const wrapper = Object.create(store) as RunStore;
  wrapper.createRun = async (run) => {
    await store.acquireLease(`run:${run.id}`, 'contract-driver', DRIVER_TTL_MS);
    return store.createRun(run);
  };
  return wrapper;
}

export interface StoreFactory {
  name: string;
  open(options: RunStoreOptions): Promise<RunStore>;
}
