import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, newRun, type StoreFactory } from './kit.js';

/** The notification outbox facet of the RunStore contract. */
export function describeOutboxContract(factory: StoreFactory): void {
  describe('notification outbox', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it("records a run's end and its notifications together, once per key", async () => {
      await store.createRun(newRun('r1'));
      const notification = (channel: string) => ({
        key: `r1/failed/0/${channel}`,
        runId: 'r1',
        event: 'failed',
        segment: '0',
        channel,
        message: { playbook: 'rolling-cluster-update', status: 'failed' },
      });
      await store.setRunStatus('r1', 'failed', {
        error: { message: 'boom' },
        notifications: [notification('ops-mail'), notification('chat')],
      });
      expect((await store.getRun('r1'))?.status).toBe('failed');
      // Recorded again (a second process recovering the end): still one row per key.
      await store.addNotifications([notification('ops-mail')]);
      const listed = await store.listNotifications({ runId: 'r1' });
      expect(listed.map((item) => [item.channel, item.state, item.attempts])).toEqual([
        ['ops-mail', 'pending', 0],
        ['chat', 'pending', 0],
      ]);
      expect(listed[0]).toMatchObject({ message: { status: 'failed' }, createdAt: '2026-03-01T10:00:00.000Z' });
      // Notifications alone leave the run's result as it is.
      await store.setRunStatus('r1', 'failed', { notifications: [notification('third')] });
      expect((await store.getRun('r1'))?.error).toEqual({ message: 'boom' });
      expect(await store.listNotifications({ state: 'pending', limit: 1 })).toHaveLength(1);
      await expect(
        store.addNotifications([{ ...notification('x'), runId: 'nope', key: 'nope/failed/0/x' }]),
      ).rejects.toMatchObject({
        code: 'RUN_NOT_FOUND',
      });
    });

    it('lets one sender claim a notification at a time, and settles it by its owner only', async () => {
      await store.createRun(newRun('r1'));
      const key = 'r1/failed/0/chat';
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      const first = await store.claimNotification(key, 'a', 10_000);
      expect(first).toMatchObject({ attempts: 1, claimedBy: 'a', claimExpiresAt: '2026-03-01T10:00:10.000Z' });
      expect(await store.claimNotification(key, 'b', 10_000)).toBeUndefined();
      // A caller that knows the holder is dead takes it over at once.
      expect(await store.claimNotification(key, 'b', 10_000, { takeOverFrom: 'a' })).toMatchObject({ attempts: 2 });
      expect(await store.settleNotification(key, 'a', { state: 'sent' })).toBe(false);
      // A failed try: pending again, not due before its backoff.
      expect(
        await store.settleNotification(key, 'b', {
          state: 'pending',
          retryAtMs: clock.now().getTime() + 2000,
          error: 'HTTP 500',
        }),
      ).toBe(true);
      expect(await store.claimNotification(key, 'c', 10_000)).toBeUndefined();
      clock.advance(2000);
      const third = await store.claimNotification(key, 'c', 10_000);
      expect(third).toMatchObject({ attempts: 3, lastError: 'HTTP 500' });
      // A lapsed claim is taken over by anyone.
      clock.advance(10_000);
      expect(await store.claimNotification(key, 'd', 10_000)).toMatchObject({ attempts: 4 });
      expect(await store.settleNotification(key, 'c', { state: 'sent' })).toBe(false);
      expect(await store.settleNotification(key, 'd', { state: 'sent' })).toBe(true);
      const [sent] = await store.listNotifications({ runId: 'r1' });
      expect(sent).toMatchObject({ state: 'sent', sentAt: clock.now().toISOString(), attempts: 4 });
      expect(sent?.claimedBy).toBeUndefined();
      // Sent is final: never claimed again, whoever asks.
      expect(await store.claimNotification(key, 'd', 10_000)).toBeUndefined();
      // Given up is final too, and the outbox goes with its run when it is pruned.
      await store.addNotifications([
        { key: 'r1/failed/0/mail', runId: 'r1', event: 'failed', segment: '0', channel: 'mail', message: {} },
      ]);
      await store.claimNotification('r1/failed/0/mail', 'e', 10_000);
      await store.settleNotification('r1/failed/0/mail', 'e', { state: 'failed', error: 'no such channel' });
      expect(await store.listNotifications({ state: 'failed' })).toMatchObject([{ lastError: 'no such channel' }]);
      await store.setRunStatus('r1', 'failed');
      clock.advance(1000);
      await store.prune(clock.now().toISOString());
      expect(await store.listNotifications()).toEqual([]);
    });

    it('keys a notification by its run, event, segment and channel, and refuses a key made otherwise', async () => {
      await store.createRun(newRun('r1'));
      const item = { runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} };
      await store.addNotifications([{ ...item, key: 'r1/failed/r0/chat' }]);
      expect(await store.listNotifications()).toMatchObject([{ key: 'r1/failed/r0/chat', segment: 'r0' }]);
      // A key that is not <run>/<event>/<segment>/<channel> could name another notification.
      for (const key of ['r1/failed/r1/chat', 'another-key', 'r1/failed/r0/chat/'])
        await expect(store.addNotifications([{ ...item, key }])).rejects.toMatchObject({
          code: 'STORE_INVALID_ARGUMENT',
        });
      await expect(store.addNotifications([{ ...item, segment: '', key: 'r1/failed//chat' }])).rejects.toMatchObject({
        code: 'STORE_INVALID_ARGUMENT',
      });
      // Each segment of the run is an event of its own.
      await store.addNotifications([{ ...item, segment: 'r1', key: 'r1/failed/r1/chat' }]);
      expect((await store.listNotifications()).map((row) => row.segment)).toEqual(['r0', 'r1']);
    });

    it('never lets a live claim be claimed again, by its own owner either, nor a sent row by anyone', async () => {
      await store.createRun(newRun('r1'));
      const key = 'r1/failed/0/chat';
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      // Two deliveries of one process (its sweep and a run's own) claim at once: one wins.
      const claims = await Promise.all([
        store.claimNotification(key, 'a', 10_000),
        store.claimNotification(key, 'a', 10_000),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      // While the claim is live, its own owner cannot take it again (it would send a second copy).
      expect(await store.claimNotification(key, 'a', 10_000)).toBeUndefined();
      expect(await store.settleNotification(key, 'a', { state: 'sent' })).toBe(true);
      // Sent is final: not after the claim would have lapsed, not by a take-over, not by a retry.
      clock.advance(60_000);
      expect(await store.claimNotification(key, 'a', 10_000)).toBeUndefined();
      expect(await store.claimNotification(key, 'b', 10_000, { takeOverFrom: 'a' })).toBeUndefined();
      expect(await store.settleNotification(key, 'a', { state: 'pending', retryAtMs: 0, error: 'late' })).toBe(false);
      // Recording it again (a second process recovering the end) leaves it sent.
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      expect(await store.listNotifications({ runId: 'r1' })).toMatchObject([{ state: 'sent', attempts: 1 }]);
    });
  });
}
