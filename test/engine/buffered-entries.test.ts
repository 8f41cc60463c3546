/**
 * Which entries a call step asks the store to commit before going on, and which it lets wait for
 * the next commit: a call's start, a read's request entries and end, and a wait's progress change
 * nothing outside the run (a crash that loses them only repeats the read or a poll), so they are
 * buffered and committed with the next entry that must be durable; a write's request entries, its
 * operation's end and its step's end are committed at once.
 */
import { afterEach, expect, it } from 'vitest';
import type { AppendOptions, JournalEvent } from '../../src/store/index.js';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

it("buffers a read's entries, a call's start and a wait's progress, and commits a write's at once", async () => {
  const h = (harness = await startHarness());
  const appended: Array<{ type: string; path: string; buffered: boolean }> = [];
  const append = h.store.append.bind(h.store);
  h.store.append = (runId: string, event: JournalEvent, options?: AppendOptions) => {
    if ('path' in event && typeof event.path === 'string' && event.path !== '')
      appended.push({ type: event.type, path: event.path, buffered: options?.buffered === true });
    return append(runId, event, options);
  };
  const result = await h.run(
    playbook([
      step({
        id: 'systems',
        kind: 'call',
        operationId: 'privateCloud.listSystems',
        with: t({ filter: "state eq 'ONLINE'" }),
      }),
      step({
        id: 'refresh',
        kind: 'call',
        operationId: 'privateCloud.refreshSoftwareVersions',
        with: t({ id: '${{ steps.systems.outputs.body.items[0].id }}' }),
        wait: { minPollMs: 1, maxPollMs: 5 },
      }),
    ]),
  );
  expect(result.status).toBe('succeeded');
  const of = (path: string, type: string) =>
    appended.filter((entry) => entry.path === path && entry.type === type).map((entry) => entry.buffered);
  expect(of('systems', 'step.started')).toEqual([true]);
  expect(of('systems', 'request.sending')).toEqual([true]);
  expect(of('systems', 'request.answered')).toEqual([true]);
  expect(of('systems', 'step.finished')).toEqual([true]);
  expect(of('refresh', 'step.started')).toEqual([true]);
  expect(of('refresh', 'request.sending')).toEqual([false]);
  expect(of('refresh', 'request.answered')).toEqual([false]);
  expect(of('refresh', 'operation.finished')).toEqual([false]);
  expect(of('refresh', 'step.finished')).toEqual([false]);
  const progress = of('refresh', 'operation.progress');
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.every(Boolean)).toBe(true);
});
