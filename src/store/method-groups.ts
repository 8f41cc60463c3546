import type { RunStore } from './types.js';

/*
 * The groups every store's methods come in (memory-store.ts, sqlite-store.ts, postgres-store.ts):
 * each store builds one object per group over its own state and spreads them into the store.
 * Plain objects, not classes: callers spread a store (`fencedView`) and pass its methods around.
 */

/** A run's life as its driver writes it: created, journaled, ended, resumed, cancelled. */
export type RunWrites = Pick<RunStore, 'createRun' | 'append' | 'setRunStatus' | 'markResumed' | 'cancelRun'>;
/** A run's wait: suspended, ended by a decision or its due time, swept when due. */
export type WaitMethods = Pick<RunStore, 'suspendRun' | 'endWait' | 'listDueWaits'>;
/** Runs as readers see them (a running run whose driver died reads `interrupted`), and their pruning. */
export type RunReads = Pick<RunStore, 'getRun' | 'countRuns' | 'listRuns' | 'prune'>;
export type JournalReads = Pick<RunStore, 'journal' | 'journalAt' | 'steps' | 'journalView' | 'saveJournalView'>;
export type OutboxMethods = Pick<
  RunStore,
  'addNotifications' | 'listNotifications' | 'claimNotification' | 'settleNotification'
>;
export type LeaseAndScheduleMethods = Pick<
  RunStore,
  | 'acquireLease'
  | 'renewLease'
  | 'releaseLease'
  | 'leaseHolder'
  | 'getScheduleState'
  | 'setScheduleState'
  | 'patchScheduleState'
>;
export type RateAndTokenMethods = Pick<
  RunStore,
  'takeRate' | 'pushRate' | 'createApiToken' | 'getApiToken' | 'listApiTokens' | 'revokeApiToken'
>;
export type WebSessionMethods = Pick<
  RunStore,
  'createWebSession' | 'getWebSession' | 'deleteWebSession' | 'sweepWebSessions'
>;
