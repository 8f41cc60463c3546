/**
 * Which entries the engine asks the store to commit before going on, and which it lets wait for
 * the next commit: a call's start, a read's request entries and end, and a wait's progress change
 * nothing outside the run (a crash that loses them only repeats the read or a poll), so they are
 * buffered and committed with the next entry that must be durable; a write's request entries, its
 * operation's end and its step's end are committed at once, and so are a container's. Whatever a
 * crash leaves of the journal after a write's answer, the resume re-attaches to its operation.
 */
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { resumeRun } from '../../src/engine/index.js';
import { createLogger } from '../../src/logging/index.js';
import {
  createMemoryRunStore,
  RunStatus,
  type AppendOptions,
  type JournalEntry,
  type JournalEvent,
} from '../../src/store/index.js';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const REFRESH = 'privateCloud.refreshSoftwareVersions';

/** Lists the online systems, then in a block refreshes the first one's versions (followed) and notes its operation's state. */
const book = playbook([
  step({
    id: 'systems',
    kind: 'call',
    operationId: 'privateCloud.listSystems',
    with: t({ filter: "state eq 'ONLINE'" }),
  }),
  step({
    id: 'work',
    kind: 'block',
    steps: [
      step({
        id: 'refresh',
        kind: 'call',
        operationId: REFRESH,
        with: t({ id: '${{ steps.systems.outputs.body.items[0].id }}' }),
        wait: { minPollMs: 1, maxPollMs: 5 },
      }),
      step({ id: 'note', kind: 'set', values: t({ operation: '${{ steps.refresh.outputs.operation.state }}' }) }),
    ],
  }),
]);

/** Runs `book`, noting for each journal entry whether the engine asked for it to be buffered. */
async function runNotingBuffering(
  h: Harness,
): Promise<{ runId: string; entries: JournalEntry[]; buffered: boolean[] }> {
  const buffered: boolean[] = [];
  const append = h.store.append.bind(h.store);
  h.store.append = (runId: string, event: JournalEvent, options?: AppendOptions) => {
    buffered.push(options?.buffered === true);
    return append(runId, event, options);
  };
  const result = await h.run(book);
  expect(result.status).toBe('succeeded');
  h.store.append = append;
  const entries = await h.store.journal(result.runId);
  expect(entries).toHaveLength(buffered.length);
  return { runId: result.runId, entries, buffered };
}

const pathOf = (event: JournalEvent): string | undefined => ('path' in event ? event.path : undefined);

it("buffers a read's entries, a call's start and a wait's progress, and commits a write's and a container's at once", async () => {
  const h = (harness = await startHarness());
  const { entries, buffered } = await runNotingBuffering(h);
  const of = (path: string, type: string) =>
    entries.flatMap((entry, index) =>
      pathOf(entry.event) === path && entry.event.type === type ? [buffered[index]] : [],
    );
  expect(of('systems', 'step.started')).toEqual([true]);
  expect(of('systems', 'request.sending')).toEqual([true]);
  expect(of('systems', 'request.answered')).toEqual([true]);
  expect(of('systems', 'step.finished')).toEqual([true]);
  expect(of('work', 'step.started')).toEqual([false]);
  expect(of('work.refresh', 'step.started')).toEqual([true]);
  expect(of('work.refresh', 'request.sending')).toEqual([false]);
  expect(of('work.refresh', 'request.answered')).toEqual([false]);
  expect(of('work.refresh', 'operation.finished')).toEqual([false]);
  expect(of('work.refresh', 'step.finished')).toEqual([false]);
  expect(of('work', 'step.finished')).toEqual([false]);
  const progress = of('work.refresh', 'operation.progress');
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.every(Boolean)).toBe(true);
});

it('resumes from every journal a crash can leave after the write was answered without sending it again', async () => {
  const h = (harness = await startHarness());
  const { runId, entries } = await runNotingBuffering(h);
  const run = await h.store.getRun(runId);
  if (!run) throw new Error('no run');
  const answered = entries.findIndex(
    (entry) => entry.event.type === 'request.answered' && pathOf(entry.event) === 'work.refresh',
  );
  expect(answered).toBeGreaterThan(0);
  // A crash after the answer may keep any number of the entries that follow (the buffered ones
  // are committed by a timer too): every longer journal.
  const original = entries.findLast(
    (entry) => entry.event.type === 'step.finished' && pathOf(entry.event) === 'work.refresh',
  )?.event;
  const quiet = createLogger({ destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  for (let kept = answered + 1; kept <= entries.length; kept += 1) {
    const store = createMemoryRunStore();
    const id = `crashed-after-${kept}`;
    await store.createRun({ ...run, id });
    for (const entry of entries.slice(0, kept)) await store.append(id, entry.event);
    await store.setRunStatus(id, RunStatus.interrupted);
    const postsBefore = h.sim.control.requests({ operationId: REFRESH }).length;
    const resumed = await resumeRun(book, { runId: id, client: h.client, store, logger: quiet });
    expect(resumed.status, `resumed with ${kept} of ${entries.length} entries`).toBe('succeeded');
    expect(h.sim.control.requests({ operationId: REFRESH }).length - postsBefore).toBe(0);
    const finished = (await store.journal(id)).findLast(
      (entry) => entry.event.type === 'step.finished' && pathOf(entry.event) === 'work.refresh',
    );
    // The outputs the first run had, but for the headers: the answer's Location only.
    const { headers: _headers, ...outputs } = (original as { outputs: { headers: unknown } }).outputs;
    expect(finished?.event).toMatchObject({ status: 'succeeded', outputs });
    const note = (await store.journal(id)).findLast((entry) => pathOf(entry.event) === 'work.note')?.event;
    expect(note).toMatchObject({ type: 'step.finished', outputs: { operation: 'SUCCEEDED' } });
  }
});
