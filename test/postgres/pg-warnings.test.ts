// The store never issues a query on a pg client that has one in flight: pg warns about it
// (a DeprecationWarning, an error in pg 9). A daemon renews its team leadership on a timer and
// before each fire, so two checks of it can overlap on the leadership's own connection.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { QueueStore } from '../../src/store/types.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

describe.skipIf(!adminUrl)('pg client use', () => {
  let store: QueueStore | undefined;
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(async () => {
    process.off('warning', onWarning);
    await store?.close();
  });

  it('overlapping checks of the leadership give one answer and no warning', async () => {
    store = await createPostgresRunStore({ url: await createTestDatabase(adminUrl ?? '') });
    const leadership = await store.tryLeadership('scheduler');
    expect(leadership).toBeDefined();
    expect(await Promise.all([leadership?.stillHeld(), leadership?.stillHeld(), leadership?.stillHeld()])).toEqual([
      true,
      true,
      true,
    ]);
    // 'warning' is emitted on the next tick after the call that warns.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
    await leadership?.release();
  });
});
