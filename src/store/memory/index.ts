import { memoryAudit } from './audit.js';
import type { RunStore, RunStoreOptions } from '../types.js';
import { memoryJournal } from './journal.js';
import { memoryLeases } from './leases.js';
import { createMemoryTables } from './open.js';
import { memoryOutbox } from './outbox.js';
import { memoryRuns } from './runs.js';
import { memorySessions } from './sessions.js';
import { memoryTokens } from './tokens.js';

/**
 * A run store in this process's memory, with the SQLite store's semantics (values are kept
 * as the same JSON, so they read back alike): for unit tests and runs that need no history.
 * Nothing survives the process. Its facets (runs, journal, outbox, leases,
 * tokens, sessions) are one file each, over the same tables (`open.ts`).
 */
export function createMemoryRunStore(options: RunStoreOptions = {}): RunStore {
  const tables = createMemoryTables(options);
  return {
    ...memoryRuns(tables),
    ...memoryJournal(tables),
    ...memoryOutbox(tables),
    ...memoryLeases(tables),
    ...memoryTokens(tables),
    ...memorySessions(tables),
    ...memoryAudit(tables),
    async close() {
      tables.close();
    },
  };
}
