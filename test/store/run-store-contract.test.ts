import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryRunStore } from '../../src/store/memory/index.js';
import { createSqliteRunStore } from '../../src/store/sqlite/index.js';
import { describeRunStoreContract } from './run-store-contract.js';

const tempDir = mkdtempSync(join(tmpdir(), 'fleetbook-store-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));
let fileCount = 0;

describeRunStoreContract({ name: 'memory', open: async (options) => createMemoryRunStore(options) });
// A fresh file per test: the store as `fleetbook` uses it, WAL and all.
describeRunStoreContract({
  name: 'sqlite',
  open: async (options) => createSqliteRunStore({ ...options, file: join(tempDir, `runs-${(fileCount += 1)}.sqlite`) }),
});
