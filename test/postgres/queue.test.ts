import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { QueueStore } from '../../src/store/types.js';
import { manualClock, newRun } from '../store/run-store-contract.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

describe.skipIf(!adminUrl)('PostgreSQL queue: claims with fencing tokens', () => {
  let url: string;
  let clock: ReturnType<typeof manualClock>;
  const opened: QueueStore[] = [];
  /** A store as one worker process has it (its own connections). */
  const worker = async () => {
    const store = await createPostgresRunStore({ url, now: clock.now });
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    url = await createTestDatabase(adminUrl ?? '');
    clock = manualClock();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('hands each queued run to one worker, oldest first, with tokens that grow at every claim', async () => {
    const [a, b, c] = [await worker(), await worker(), await worker()];
    for (const id of ['q1', 'q2', 'q3', 'q4']) expect((await a.enqueueRun(newRun(id))).status).toBe('queued');
    const claims = await Promise.all([a, b, c, a].map((store, index) => store.claimRun(`worker-${index}`, 30_000)));
    const ids = claims.map((claim) => claim?.run.id);
    expect([...ids].sort()).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect(claims.every((claim) => claim?.run.status === 'running')).toBe(true);
    expect(new Set(claims.map((claim) => claim?.fence)).size).toBe(4);
    expect(await b.claimRun('worker-b', 30_000)).toBeUndefined();
    // `runs list` sees them running; a finished run is never claimed again.
    await a.fenced('q1', claims[ids.indexOf('q1')]?.fence ?? -1).setRunStatus('q1', 'succeeded');
    clock.advance(60_000);
    const retaken = [
      await c.claimRun('worker-c', 30_000),
      await c.claimRun('worker-c', 30_000),
      await c.claimRun('worker-c', 30_000),
      await c.claimRun('worker-c', 30_000),
    ];
    expect(retaken.map((claim) => claim?.run.id)).toEqual(['q2', 'q3', 'q4', undefined]);
    for (const claim of retaken.slice(0, 3))
      expect(claim?.fence).toBeGreaterThan(Math.max(...claims.map((first) => first?.fence ?? 0)));
  });

  it('refuses every write of a worker whose lapsed claim another took over; the new holder writes', async () => {
    const [a, b] = [await worker(), await worker()];
    await a.enqueueRun(newRun('r1'));
    const first = await a.claimRun('worker-a', 10_000);
    expect(first?.run.id).toBe('r1');
    const asA = a.fenced('r1', first?.fence ?? -1);
    await asA.append('r1', { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' });
    clock.advance(5_000);
    expect(await a.renewClaim('r1', first?.fence ?? -1, 10_000)).toBe(true);
    // Renewed: not yet claimable.
    clock.advance(9_000);
    expect(await b.claimRun('worker-b', 10_000)).toBeUndefined();
    clock.advance(1_000);
    const second = await b.claimRun('worker-b', 10_000);
    expect(second).toMatchObject({ run: { id: 'r1' }, previousOwner: 'worker-a' });
    expect(second?.fence).toBeGreaterThan(first?.fence ?? Infinity);

    await expect(
      asA.append('r1', { type: 'request.sending', path: 'update', attempt: 1, operationId: 'x', method: 'POST' }),
    ).rejects.toMatchObject({ code: 'STALE_FENCE' });
    await expect(
      asA
        .append('r1', { type: 'item.started', path: 'systems', index: 0 }, { buffered: true })
        .then(() => asA.journal('r1')),
    ).rejects.toMatchObject({ code: 'STALE_FENCE' });
    await expect(asA.setRunStatus('r1', 'failed')).rejects.toMatchObject({ code: 'STALE_FENCE' });
    await expect(asA.markResumed('r1')).rejects.toMatchObject({ code: 'STALE_FENCE' });
    expect(await a.renewClaim('r1', first?.fence ?? -1, 10_000)).toBe(false);
    expect(await a.requeueRun('r1', first?.fence ?? -1)).toBe(false);

    const asB = b.fenced('r1', second?.fence ?? -1);
    await asB.append('r1', { type: 'step.finished', path: 'update', status: 'succeeded' });
    await asB.setRunStatus('r1', 'succeeded');
    const journal = await b.journal('r1');
    expect(journal.map((entry) => entry.event.type)).toEqual(['step.started', 'step.finished']);
    expect((await b.getRun('r1'))?.status).toBe('succeeded');
  });

  it("fails only the appends of a run whose claim was taken over, when two runs' appends are made at once", async () => {
    const [a, b] = [await worker(), await worker()];
    await a.enqueueRun(newRun('r1'));
    await a.enqueueRun(newRun('r2'));
    const first = await a.claimRun('worker-a', 10_000);
    const other = await a.claimRun('worker-a', 10_000);
    const stale = a.fenced(first?.run.id ?? '', first?.fence ?? -1);
    const kept = a.fenced(other?.run.id ?? '', other?.fence ?? -1);
    clock.advance(20_000);
    const taken = await b.claimRun('worker-b', 10_000);
    expect(taken?.run.id).toBe(first?.run.id);
    // Worker a's appends of both runs, made in one turn, share the commits that follow.
    const sent = (index: number) =>
      ({
        type: 'request.sending',
        path: `systems[${index}].update`,
        attempt: 1,
        operationId: 'x',
        method: 'POST',
      }) as const;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, index) =>
        index % 4 === 0
          ? stale.append(first?.run.id ?? '', sent(index))
          : kept.append(other?.run.id ?? '', sent(index)),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason.code)).toEqual(
      Array.from({ length: 10 }, () => 'STALE_FENCE'),
    );
    const journal = await b.journal(other?.run.id ?? '');
    expect(journal.map((entry) => [entry.seq, (entry.event as { path: string }).path])).toEqual(
      Array.from({ length: 40 }, (_, index) => index)
        .filter((index) => index % 4 !== 0)
        .map((index, position) => [position + 1, `systems[${index}].update`]),
    );
    expect(await b.journal(first?.run.id ?? '')).toEqual([]);
  });

  it('a draining worker puts its run back in the queue for the next claim', async () => {
    const [a, b] = [await worker(), await worker()];
    await a.enqueueRun(newRun('r1'));
    const first = await a.claimRun('worker-a', 10_000);
    expect(await a.requeueRun('r1', first?.fence ?? -1)).toBe(true);
    expect((await b.getRun('r1'))?.status).toBe('queued');
    const second = await b.claimRun('worker-b', 10_000);
    expect(second?.run.id).toBe('r1');
    expect(second?.previousOwner).toBeUndefined();
  });

  it('an unfenced append to an unknown run is still RUN_NOT_FOUND, a fenced one too', async () => {
    const a = await worker();
    await expect(
      a.fenced('nope', 1).append('nope', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' }),
    ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});
