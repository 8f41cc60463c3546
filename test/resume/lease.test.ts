// A run that loses its lease stops: it starts no new work and writes nothing more to the store.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRunStore, type RunStore } from '../../src/store/index.js';
import { createManualClock } from '../../src/scheduler/testing.js';
import { playbook, startHarness, step, t, type Harness } from '../engine/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const book = playbook([
  step({ id: 'nap', kind: 'sleep', duration: t('1h') }),
  step({ id: 'after', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) }),
]);

/** Waits for the run to reach a point, looking again after each turn of the event loop (no wall time). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

// The run's time (its lease renewals, its sleep) moves only when the test says so.
const START_MS = Date.parse('2026-03-01T10:00:00Z');

const started = async (store: RunStore, runId: string, path: string): Promise<boolean> =>
  (await store.journal(runId)).some((entry) => entry.event.type === 'step.started' && entry.event.path === path);

// Each test moves its run's clock by 20-40 s: done in milliseconds unless renewals wait for wall time.
describe('the run lease', { timeout: 5_000 }, () => {
  it('taken by another process after it lapsed: the run stops, starts nothing more and leaves the run to the new owner', async () => {
    h = await startHarness();
    const clock = createManualClock(START_MS);
    let nowMs = START_MS;
    const store = createMemoryRunStore({ now: () => new Date(nowMs) });
    const running = h.run(book, { store, runId: 'r1', leaseTtlMs: 60_000, clock });
    await until(() => started(store, 'r1', 'nap'));
    // The process stalled past its lease (the store's clock jumps): another process takes the run over.
    nowMs += 61_000;
    expect(await store.acquireLease('run:r1', 'other-process', 60_000)).toBe(true);
    // The next renewal, a third of the TTL on (in the run's time: no wall time passes), finds the lease taken.
    await clock.advanceBy(20_000);

    const result = await running;
    expect(result).toMatchObject({
      status: 'interrupted',
      error: { code: 'LEASE_LOST', message: expect.stringContaining('lost its lease to another process') },
    });
    expect(await started(store, 'r1', 'after')).toBe(false);
    expect(h.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(0);
    // Neither the sleep's ending nor the run's status were written over the new owner's run.
    expect((await store.journal('r1')).map((entry) => entry.event.type)).toEqual(['step.started']);
    expect(await store.getRun('r1')).toMatchObject({ status: 'running' });
    expect((await store.leaseHolder('run:r1'))?.owner).toBe('other-process');
    expect(h.lines().find((line) => line.event === 'lease.lost')).toMatchObject({ runId: 'r1', level: 50 });
  });

  it('released by the worker that took the run over: the paused run stops, and never takes the lease back', async () => {
    // A team worker paused past its claim (SIGSTOP): the worker taking the run over releases the
    // paused one's lease, then takes its own. A renewal that re-acquired the free lease in between
    // left the new worker refused ('is being driven by another process') and the run failed.
    h = await startHarness();
    const clock = createManualClock(START_MS);
    const store = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const running = h.run(book, { store, runId: 'r3', leaseTtlMs: 60_000, clock });
    await until(() => started(store, 'r3', 'nap'));
    const paused = await store.leaseHolder('run:r3');
    expect(paused).toBeDefined();
    await store.releaseLease('run:r3', paused!.owner);
    // The paused run's renewal falls due before the new worker's engine takes the lease.
    await clock.advanceBy(20_000);

    const result = await running;
    expect(result).toMatchObject({
      status: 'interrupted',
      error: { code: 'LEASE_LOST', message: expect.stringContaining('lost its lease to another process') },
    });
    expect(await store.leaseHolder('run:r3')).toBeUndefined();
    expect(await store.acquireLease('run:r3', 'the-worker-that-took-over', 60_000)).toBe(true);
    expect(await started(store, 'r3', 'after')).toBe(false);
  });

  it('lapsed while the process was paused, nobody holding it yet: the run stops rather than take it back', async () => {
    // The worker taking the run over on the lapse has not acquired the lease yet: a renewal that
    // revived the lapsed lease would refuse it ('is being driven by another process').
    h = await startHarness();
    const clock = createManualClock(START_MS);
    let nowMs = START_MS;
    const store = createMemoryRunStore({ now: () => new Date(nowMs) });
    const running = h.run(book, { store, runId: 'r4', leaseTtlMs: 60_000, clock });
    await until(() => started(store, 'r4', 'nap'));
    nowMs += 61_000;
    await clock.advanceBy(20_000);

    expect(await running).toMatchObject({ status: 'interrupted', error: { code: 'LEASE_LOST' } });
    expect(await store.leaseHolder('run:r4')).toBeUndefined();
    expect(await store.acquireLease('run:r4', 'the-worker-that-took-over', 60_000)).toBe(true);
  });

  it('that cannot be renewed until little of it is left: the run stops rather than outlive it', async () => {
    h = await startHarness();
    const real = createMemoryRunStore();
    let renewals = 0;
    const store: RunStore = {
      ...real,
      renewLease: async () => {
        renewals += 1;
        throw new Error('database is locked');
      },
    };
    const clock = createManualClock(START_MS);
    const running = h.run(book, { store, runId: 'r2', leaseTtlMs: 60_000, clock });
    await until(() => started(real, 'r2', 'nap'));
    // Renewals fail at 20 s (40 s of the lease left: tried again) and at 40 s (a third left: the run stops).
    await clock.advanceBy(40_000);
    const result = await running;
    expect(result).toMatchObject({
      status: 'interrupted',
      error: {
        code: 'LEASE_LOST',
        message: expect.stringContaining('could not renew its lease before it lapsed (database is locked)'),
      },
    });
    expect(renewals).toBeGreaterThanOrEqual(2);
    expect(await started(real, 'r2', 'after')).toBe(false);
    expect(h.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(0);
    expect(h.lines().filter((line) => line.event === 'lease.renewFailed').length).toBeGreaterThanOrEqual(1);
  });
});
