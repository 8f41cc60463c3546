import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, type StoreFactory } from './kit.js';

/** The leases, schedules and rates facet of the RunStore contract. */
export function describeLeasesContract(factory: StoreFactory): void {
  describe('leases, schedules and rates', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('holds a lease for its owner until the TTL passes, then lets another take over', async () => {
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      clock.advance(20_000);
      // Renewing pushes the expiry out from now.
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      clock.advance(20_000);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      clock.advance(10_001);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(true);
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.acquireLease('scheduler', 'host-a:1', 30_000)).toBe(true);
    });

    it('names the holder of a live lease, none once it expired', async () => {
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      expect(await store.leaseHolder('run:r1')).toEqual({
        owner: 'host-a:1',
        expiresAt: new Date(clock.now().getTime() + 30_000).toISOString(),
      });
      clock.advance(30_000);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
    });

    it('renews a lease only while its owner still holds it: never a released or taken one', async () => {
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(20_000);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      expect(await store.leaseHolder('run:r1')).toEqual({
        owner: 'host-a:1',
        expiresAt: new Date(clock.now().getTime() + 30_000).toISOString(),
      });
      expect(await store.renewLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      // Released by the process that took the run over: the old owner's renewal does not take it back.
      await store.releaseLease('run:r1', 'host-a:1');
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      // Lapsed, even with nobody holding it since: lost, not renewed (another may be taking over on the lapse).
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(30_000);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.releaseLease('run:r1', 'host-a:1');
      // Taken by another after it lapsed: the old owner's renewal does not extend the new one's.
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(30_000);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(true);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect((await store.leaseHolder('run:r1'))?.owner).toBe('host-b:2');
      await expect(store.renewLease('run:r1', 'host-b:2', 0)).rejects.toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
    });

    it('releases a lease only for its owner', async () => {
      await store.acquireLease('scheduler', 'host-a:1', 30_000);
      await store.releaseLease('scheduler', 'host-b:2');
      expect(await store.acquireLease('scheduler', 'host-b:2', 30_000)).toBe(false);
      await store.releaseLease('scheduler', 'host-a:1');
      expect(await store.acquireLease('scheduler', 'host-b:2', 30_000)).toBe(true);
      await expect(store.acquireLease('scheduler', 'host-b:2', 0)).rejects.toMatchObject({
        code: 'STORE_INVALID_ARGUMENT',
      });
    });

    it('keeps schedule state per schedule', async () => {
      expect(await store.getScheduleState('nightly')).toBeUndefined();
      await store.setScheduleState('nightly', { lastFireAt: '2026-03-01T02:00:00.000Z', consecutiveFailures: 0 });
      await store.setScheduleState('nightly', {
        lastFireAt: '2026-03-02T02:00:00.000Z',
        consecutiveFailures: 1,
        paused: true,
      });
      await store.setScheduleState('weekly', { paused: false });
      expect(await store.getScheduleState('nightly')).toEqual({
        lastFireAt: '2026-03-02T02:00:00.000Z',
        consecutiveFailures: 1,
        paused: true,
      });
      expect(await store.getScheduleState('weekly')).toEqual({ paused: false });
    });

    it('patches schedule state field by field: other fields stay, null removes one', async () => {
      await store.patchScheduleState('nightly', {
        paused: true,
        pausedAt: '2026-03-01T02:00:00.000Z',
        queued: ['a', 'b'],
      });
      await store.patchScheduleState('nightly', { lastSkip: { reason: 'paused', scheduledAt: 'x' } });
      await store.patchScheduleState('nightly', { lastSkip: { reason: 'paused' }, queued: ['b'] });
      await store.patchScheduleState('nightly', { paused: false, pausedAt: null });
      expect(await store.getScheduleState('nightly')).toEqual({
        paused: false,
        lastSkip: { reason: 'paused' },
        queued: ['b'],
      });
    });

    it('paces a rate bucket with GCRA: one start per interval past the burst, buckets apart', async () => {
      // 60 per minute: one a second; a burst of 3 is a tolerance of 2 intervals.
      expect(await Promise.all([1, 2, 3, 4, 5].map(() => store.takeRate('conn|private-cloud', 1000, 2000)))).toEqual([
        0, 0, 0, 1000, 2000,
      ]);
      expect(await store.takeRate('conn|reporting', 1000, 0)).toBe(0);
      expect(await store.takeRate('conn|reporting', 1000, 0)).toBe(1000);
      // Time passing pays the debt back, up to the burst again.
      clock.advance(10_000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(0);
    });

    it('a push holds everyone off a bucket until its time, and never pulls it back', async () => {
      await store.pushRate('conn|private-cloud', clock.now().getTime() + 30_000, 2000);
      await store.pushRate('conn|private-cloud', clock.now().getTime() + 5_000, 2000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(30_000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(31_000);
      expect(await store.takeRate('conn|other', 1000, 2000)).toBe(0);
    });
  });
}
