import { describe } from 'vitest';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import { describeCancelRace } from '../support/cancel-race.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

describe.skipIf(!adminUrl)('PostgreSQL store', () => {
  describeCancelRace('postgres', async () => createPostgresRunStore({ url: await createTestDatabase(adminUrl ?? '') }));
});
