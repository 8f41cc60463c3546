/** The run store: what Fleetbook remembers across processes (see types.ts for the contract). */
export * from './types.js';
export { createMemoryRunStore } from './memory/index.js';
export {
  createJournalFold,
  foldJournal,
  itemKind,
  journalPages,
  JOURNAL_PAGE_SIZE,
  withoutValues,
  type JournalFold,
  type JournalFoldOptions,
} from './fold-journal.js';
export {
  checkpointJournalView,
  foldJournalView,
  logLineCollector,
  logMessage,
  JOURNAL_VIEW_MIN_ENTRIES,
} from './journal-view.js';
export { StoreError, StoreErrorCode, isStoreError } from './store-error.js';
export { defaultMaxPayloadBytes } from './payload.js';
export { createSqliteRunStore, type SqliteRunStoreOptions } from './sqlite/index.js';
export { createPostgresRunStore, redactStoreUrl, type PostgresRunStoreOptions } from './postgres/index.js';
export {
  openRunStore,
  withRunStore,
  resolveStoreUrl,
  outputsDirOf,
  worldsDirOf,
  resolveFleetbookHome,
  defaultFleetbookHome,
  runStoreFileName,
  type OpenRunStoreOptions,
} from './open-run-store.js';
export { buildStepTree, type StepNode } from './step-tree.js';
export {
  runLeaseKey,
  newLeaseOwner,
  parseLeaseOwner,
  isDeadLeaseOwner,
  hasLiveDriver,
  lastHeartbeatMs,
  RUN_LEASE_TTL_MS,
  acquireLeaseFromLiveOrDead,
  describeLeaseOwner,
  type LeaseOwner,
} from './lease-owner.js';
export { pruneRuns } from './prune.js';
export { notificationKeyOf } from './notification-row.js';
export {
  AUDIT_GENESIS,
  AUDIT_PAGE_MAX,
  auditHash,
  auditPages,
  canonicalJson,
  verifyAuditChain,
  type AuditBreak,
} from './audit-row.js';
