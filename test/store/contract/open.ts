import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, type StoreFactory } from './kit.js';

/** The opening and closing facet of the RunStore contract. */
export function describeOpenContract(factory: StoreFactory): void {
  describe('opening and closing', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('refuses calls once closed', async () => {
      await store.close();
      await expect(store.getRun('r1')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
      store = await factory.open({ now: clock.now });
    });
  });
}
