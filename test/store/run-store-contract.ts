/**
 * The RunStore contract, run against every implementation: the memory and SQLite stores
 * (`run-store-contract.test.ts`) and PostgreSQL (`test/postgres/`). One file per facet of the
 * store (`contract/<facet>.ts`), as the stores are written.
 */
import { describe } from 'vitest';
import { describeAuditContract } from './contract/audit.js';
import { describeJournalContract } from './contract/journal.js';
import type { StoreFactory } from './contract/kit.js';
import { describeLeasesContract } from './contract/leases.js';
import { describeOpenContract } from './contract/open.js';
import { describeOutboxContract } from './contract/outbox.js';
import { describeRunsContract } from './contract/runs.js';
import { describeSessionsContract } from './contract/sessions.js';
import { describeTokensContract } from './contract/tokens.js';

export { manualClock, newRun, type StoreFactory } from './contract/kit.js';

/** Declares the contract's tests for stores `factory` opens (a fresh, empty store per call). */
export function describeRunStoreContract(factory: StoreFactory): void {
  describe(`RunStore contract: ${factory.name}`, () => {
    describeRunsContract(factory);
    describeJournalContract(factory);
    describeLeasesContract(factory);
    describeTokensContract(factory);
    describeSessionsContract(factory);
    describeOutboxContract(factory);
    describeAuditContract(factory);
    describeOpenContract(factory);
  });
}
