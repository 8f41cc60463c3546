import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, type StoreFactory } from './kit.js';

/** The web sessions facet of the RunStore contract. */
export function describeSessionsContract(factory: StoreFactory): void {
  describe('web sessions', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('keeps web sessions by their id hash until they expire, end or are swept', async () => {
      const start = clock.now().getTime();
      const session = (idHash: string, ttlMs: number) => ({
        idHash,
        tokenId: 't1',
        createdAt: clock.now().toISOString(),
        expiresAtMs: start + ttlMs,
      });
      await store.createWebSession(session('a'.repeat(64), 60_000));
      await store.createWebSession(session('b'.repeat(64), 1_000));
      await store.createWebSession(session('c'.repeat(64), 60_000));
      expect(await store.getWebSession('a'.repeat(64))).toEqual(session('a'.repeat(64), 60_000));
      expect(await store.getWebSession('d'.repeat(64))).toBeUndefined();
      // A single sign-on's session keeps its user (no token behind it).
      const user = { name: 'alice', groups: ['sre', 'change-managers'], role: 'operator' as const };
      await store.createWebSession({ ...session('e'.repeat(64), 60_000), tokenId: 'oidc', user });
      expect(await store.getWebSession('e'.repeat(64))).toMatchObject({ tokenId: 'oidc', user });
      expect((await store.getWebSession('a'.repeat(64)))?.user).toBeUndefined();
      await store.deleteWebSession('e'.repeat(64));
      // Logout ends one session only.
      await store.deleteWebSession('c'.repeat(64));
      expect(await store.getWebSession('c'.repeat(64))).toBeUndefined();
      await store.deleteWebSession('c'.repeat(64));
      clock.advance(1_000);
      // Expired by the store's clock: not returned, and swept.
      expect(await store.getWebSession('b'.repeat(64))).toBeUndefined();
      expect(await store.sweepWebSessions()).toBe(1);
      expect(await store.sweepWebSessions()).toBe(0);
      expect(await store.getWebSession('a'.repeat(64))).toMatchObject({ tokenId: 't1' });
      clock.advance(59_000);
      expect(await store.sweepWebSessions()).toBe(1);
      expect(await store.getWebSession('a'.repeat(64))).toBeUndefined();
    });
  });
}
