import type { RunsFacet } from './types.js';

/*
 * The runs facet is the largest: each store writes it in three groups (`<store>/runs.ts`), each
 * a function of the store's state returning its methods, so no function outgrows the 80-line rule.
 */

/** A run's life as its driver writes it: created, ended, resumed, cancelled. */
export type RunWrites = Pick<RunsFacet, 'createRun' | 'setRunStatus' | 'markResumed' | 'cancelRun'>;
/** A run's wait: suspended, ended by a decision or its due time, swept when due. */
export type WaitMethods = Pick<RunsFacet, 'suspendRun' | 'endWait' | 'listDueWaits'>;
/** Runs as readers see them (a running run whose driver died reads `interrupted`), and their pruning. */
export type RunReads = Pick<RunsFacet, 'getRun' | 'countRuns' | 'listRuns' | 'prune'>;
