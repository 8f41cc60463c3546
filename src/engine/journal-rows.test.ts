/**
 * What the engine journals per step and per loop item: one entry for a quiet step of one
 * attempt, none for the start of an item whose steps are all such; and a resume of a journal
 * written the older way (a `step.started` and an `item.started` for each) still replays what it
 * recorded and runs the rest.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryRunStore, RunStatus, type JournalEvent } from '../store/index.js';
import { createVirtualClock } from '../timers/index.js';
import { createLogger } from '../logging/index.js';
import { Writable } from 'node:stream';
import { fakeClient, fastRun, noRetry, playbook, step, t } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';

const double = step({ id: 'double', kind: 'set', values: t({ value: '${{ n * 2 }}' }) });
const loopOf = (steps = [double], items = [1, 2]) =>
  step({ id: 'loop', kind: 'forEach', items: t(items), as: 'n', concurrency: t(1), steps });
const book = playbook([loopOf([double], [1, 2, 3, 4])], {
  outputs: t({ values: '${{ steps.loop.outputs.items.steps.double.outputs.value }}' }),
});

const quietLogger = () =>
  createLogger({ level: 'error', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });

describe('journal rows', () => {
  it('a quiet step journals one entry, and an item of such steps only its end', async () => {
    const run = await fastRun(playbook([loopOf()]));
    expect(run.result.status).toBe('succeeded');
    const items = run.events.filter((event) => event.type.startsWith('item') || event.path !== 'loop');
    expect(items).toEqual([
      {
        type: 'step.finished',
        path: 'loop[0].double',
        stepId: 'double',
        kind: 'set',
        status: 'succeeded',
        outputs: { value: 2 },
      },
      { type: 'item.finished', path: 'loop', index: 0, status: 'succeeded', label: '1' },
      {
        type: 'step.finished',
        path: 'loop[1].double',
        stepId: 'double',
        kind: 'set',
        status: 'succeeded',
        outputs: { value: 4 },
      },
      { type: 'item.finished', path: 'loop', index: 1, status: 'succeeded', label: '2' },
    ]);
    // The stored record of each step and item, as `runs show` reads it.
    const records = await run.store.steps(run.result.runId);
    expect(records.map((record) => [record.path, record.kind, record.status])).toEqual([
      ['loop', 'forEach', 'succeeded'],
      ['loop[0].double', 'set', 'succeeded'],
      ['loop[0]', 'item', 'succeeded'],
      ['loop[1].double', 'set', 'succeeded'],
      ['loop[1]', 'item', 'succeeded'],
    ]);
  });

  it('journals the starts of steps that may retry or act, and of the items holding them', async () => {
    const say = step({ id: 'say', kind: 'log', message: t('item ${{ n }}'), level: 'info' });
    const check = step({
      id: 'check',
      kind: 'assert',
      condition: t('${{ n > 0 }}'),
      retry: { ...noRetry, maxAttempts: 2 },
    });
    const logged = await fastRun(playbook([loopOf([say], [1])]));
    expect(logged.events.filter((event) => event.path === 'loop[0].say')).toEqual([
      {
        type: 'step.finished',
        path: 'loop[0].say',
        stepId: 'say',
        kind: 'log',
        status: 'succeeded',
        outputs: { message: 'item 1' },
      },
    ]);
    const retried = await fastRun(playbook([loopOf([check], [1])]));
    expect(retried.events.map((event) => event.type)).toEqual([
      'step.started',
      'item.started',
      'step.started',
      'step.finished',
      'item.finished',
      'step.finished',
    ]);
    const waited = await fastRun(playbook([loopOf([step({ id: 'nap', kind: 'sleep', duration: t(10) })], [1])]));
    expect(waited.events.filter((event) => event.type === 'item.started')).toHaveLength(1);
  });

  it('resumes a journal of the older form: items it recorded replayed, the rest run', async () => {
    const store = createMemoryRunStore();
    const runId = 'old-run';
    await store.createRun({
      id: runId,
      playbook: book.name,
      playbookSource: book.source,
      playbookHash: book.hash,
      inputs: {},
      secretInputNames: [],
      defaultedSecretInputs: [],
      dryRun: false,
      trigger: { kind: 'manual' },
      startedAt: '2026-01-01T00:00:00.000Z',
    });
    const older: JournalEvent[] = [
      { type: 'step.started', path: 'loop', stepId: 'loop', kind: 'forEach', input: { items: 4 } },
      ...[0, 1].flatMap((index): JournalEvent[] => [
        { type: 'item.started', path: 'loop', index },
        { type: 'step.started', path: `loop[${index}].double`, stepId: 'double', kind: 'set' },
        // Recorded outputs a run again would not give: the replay shows they were not recomputed.
        { type: 'step.finished', path: `loop[${index}].double`, status: 'succeeded', outputs: { value: 100 + index } },
        { type: 'item.finished', path: 'loop', index, status: 'succeeded' },
      ]),
      // The process died inside item 2.
      { type: 'item.started', path: 'loop', index: 2 },
      { type: 'step.started', path: 'loop[2].double', stepId: 'double', kind: 'set' },
    ];
    for (const event of older) await store.append(runId, event);
    await store.setRunStatus(runId, RunStatus.interrupted);

    const resumed = await resumeRun(book, {
      runId,
      client: fakeClient({}),
      store,
      logger: quietLogger(),
      clock: createVirtualClock(Date.parse('2026-01-01T01:00:00Z')),
    });
    expect(resumed.status).toBe('succeeded');
    expect(resumed.outputs).toEqual({ values: [100, 101, 6, 8] });
    const added = (await store.journal(runId)).slice(older.length).map((entry) => entry.event);
    expect(added.filter((event) => event.path.startsWith('loop[') || event.type.startsWith('item'))).toEqual([
      {
        type: 'step.finished',
        path: 'loop[2].double',
        stepId: 'double',
        kind: 'set',
        status: 'succeeded',
        outputs: { value: 6 },
      },
      { type: 'item.finished', path: 'loop', index: 2, status: 'succeeded', label: '3' },
      {
        type: 'step.finished',
        path: 'loop[3].double',
        stepId: 'double',
        kind: 'set',
        status: 'succeeded',
        outputs: { value: 8 },
      },
      { type: 'item.finished', path: 'loop', index: 3, status: 'succeeded', label: '4' },
    ]);
    const records = await store.steps(runId);
    expect(records.filter((record) => record.kind === 'item').map((record) => [record.path, record.status])).toEqual([
      ['loop[0]', 'succeeded'],
      ['loop[1]', 'succeeded'],
      ['loop[2]', 'succeeded'],
      ['loop[3]', 'succeeded'],
    ]);
  });

  it('a journal that lost the entries of a quiet step (a crash before their commit) runs it again', async () => {
    const first = await fastRun(book);
    const entries = await first.store.journal(first.result.runId);
    // Keep the loop's start and item 0 only, as if the process died before the rest was committed.
    const store = createMemoryRunStore();
    const run = await first.store.getRun(first.result.runId);
    if (!run) throw new Error('no run');
    await store.createRun({ ...run, id: 'crashed' });
    for (const entry of entries.slice(0, 3)) await store.append('crashed', entry.event);
    await store.setRunStatus('crashed', RunStatus.interrupted);
    const resumed = await resumeRun(book, {
      runId: 'crashed',
      client: fakeClient({}),
      store,
      logger: quietLogger(),
      clock: createVirtualClock(Date.parse('2026-01-01T01:00:00Z')),
    });
    expect(resumed.outputs).toEqual({ values: [2, 4, 6, 8] });
    expect(resumed.steps.filter((line) => line.replayed).map((line) => line.path)).toEqual([
      'loop[0]',
      'loop[0].double',
    ]);
  });
});
