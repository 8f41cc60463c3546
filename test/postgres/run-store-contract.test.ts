import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { RunStore } from '../../src/store/types.js';
import { describeRunStoreContract } from '../store/run-store-contract.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

describe.skipIf(!adminUrl)('PostgreSQL store', () => {
  const opened: RunStore[] = [];
  let dbCount = 0;
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
  });
  // A fresh database per test, as the SQLite suite takes a fresh file.
  let databases: string[] = [];
  beforeAll(async () => {
    databases = await Promise.all(Array.from({ length: 20 }, () => createTestDatabase(adminUrl ?? '')));
  });
  describeRunStoreContract({
    name: 'postgres',
    open: async (options) => {
      const url = databases[dbCount++] ?? (await createTestDatabase(adminUrl ?? ''));
      const store = await createPostgresRunStore({ ...options, url });
      opened.push(store);
      return store;
    },
  });
});
