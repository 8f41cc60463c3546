import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJournalFold, journalPages, withoutValues } from '../../../src/store/fold-journal.js';
import { checkpointJournalView, foldJournalView, VIEW_PART_RECORDS } from '../../../src/store/journal-view.js';
import type { JournalEvent, RunStore } from '../../../src/store/types.js';
import { driven, manualClock, newRun, type StoreFactory } from './kit.js';

/** The journal facet of the RunStore contract. */
export function describeJournalContract(factory: StoreFactory): void {
  describe('journal', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('journals events in order with sequence numbers and times, and folds them into steps', async () => {
      await store.createRun(newRun('r1'));
      await store.append('r1', {
        type: 'step.started',
        path: 'catalog',
        stepId: 'catalog',
        kind: 'call',
        input: { filter: "version eq '2.4.0'" },
      });
      clock.advance(1500);
      await store.append('r1', {
        type: 'request.sending',
        path: 'catalog',
        attempt: 1,
        operationId: 'privateCloud.listSoftwareCatalogs',
        method: 'GET',
      });
      await store.append('r1', { type: 'request.answered', path: 'catalog', attempt: 1, httpStatus: 200 });
      await store.append('r1', {
        type: 'step.finished',
        path: 'catalog',
        status: 'succeeded',
        outputs: { status: 200, body: { items: [] } },
      });
      const journal = await store.journal('r1');
      expect(journal.map((entry) => [entry.runId, entry.seq, entry.event.type])).toEqual([
        ['r1', 1, 'step.started'],
        ['r1', 2, 'request.sending'],
        ['r1', 3, 'request.answered'],
        ['r1', 4, 'step.finished'],
      ]);
      expect(journal[0]?.at).toBe('2026-03-01T10:00:00.000Z');
      expect(journal[1]?.at).toBe('2026-03-01T10:00:01.500Z');
      expect(await store.steps('r1')).toEqual([
        {
          path: 'catalog',
          stepId: 'catalog',
          kind: 'call',
          status: 'succeeded',
          attempts: 1,
          startedAt: '2026-03-01T10:00:00.000Z',
          endedAt: '2026-03-01T10:00:01.500Z',
          input: { filter: "version eq '2.4.0'" },
          outputs: { status: 200, body: { items: [] } },
        },
      ]);
    });

    it('keeps journals of runs apart, and knows no journal of an unknown run', async () => {
      await store.createRun(newRun('r1'));
      await store.createRun(newRun('r2'));
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' });
      await store.append('r2', { type: 'step.started', path: 'b', stepId: 'b', kind: 'set' });
      await store.append('r2', { type: 'step.finished', path: 'b', status: 'succeeded' });
      expect((await store.journal('r2')).map((entry) => entry.seq)).toEqual([1, 2]);
      expect((await store.steps('r1')).map((step) => step.path)).toEqual(['a']);
      expect(await store.journal('nope')).toEqual([]);
      await expect(
        store.append('nope', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' }),
      ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('reads a journal in pages by seq, and folds the pages into the same steps as the whole', async () => {
      await store.createRun(newRun('r1'));
      for (const path of ['a', 'b', 'c', 'd', 'e']) {
        await store.append('r1', { type: 'step.started', path, stepId: path, kind: 'set' });
        await store.append('r1', { type: 'step.finished', path, status: 'succeeded', outputs: { path } });
      }
      expect((await store.journal('r1', 3, 4)).map((entry) => entry.seq)).toEqual([4, 5, 6, 7]);
      expect((await store.journal('r1', 8, 4)).map((entry) => entry.seq)).toEqual([9, 10]);
      const pages: number[][] = [];
      for await (const page of journalPages(store, 'r1', 4)) pages.push(page.map((entry) => entry.seq));
      expect(pages).toEqual([
        [1, 2, 3, 4],
        [5, 6, 7, 8],
        [9, 10],
      ]);
      const fold = createJournalFold({ values: false });
      for await (const page of journalPages(store, 'r1', 3)) for (const entry of page) fold.add(entry);
      const whole = await store.steps('r1');
      expect(whole.map((step) => step.outputs)).toEqual([
        { path: 'a' },
        { path: 'b' },
        { path: 'c' },
        { path: 'd' },
        { path: 'e' },
      ]);
      // Without values: the same records, their outputs dropped and where to read them and the inputs back.
      expect(fold.records()).toEqual(
        whole.map(({ outputs: _outputs, ...rest }, index) => ({
          ...rest,
          startedSeq: 2 * index + 1,
          finishedSeq: 2 * index + 2,
        })),
      );
    });

    it('reads entries by seq in one read, with their values, in seq order, leaving out seqs it does not hold', async () => {
      await store.createRun(newRun('r1'));
      await store.createRun(newRun('r2'));
      for (const path of ['a', 'b', 'c', 'd']) {
        await store.append('r1', { type: 'step.started', path, stepId: path, kind: 'set', input: { path } });
        await store.append('r2', { type: 'step.started', path, stepId: path, kind: 'set' });
        // Large enough for a SQL store to cut it in a read without values: read by seq, it is whole.
        await store.append(
          'r1',
          { type: 'step.finished', path, status: 'succeeded', outputs: { path, blob: 'x'.repeat(600) } },
          { buffered: true },
        );
      }
      const whole = await store.journal('r1');
      const at = await store.journalAt('r1', [8, 2, 3, 2, 42, 0]);
      expect(at).toEqual([whole[1], whole[2], whole[7]]);
      expect(at.map((entry) => entry.seq)).toEqual([2, 3, 8]);
      expect(at[2]?.event).toMatchObject({ outputs: { path: 'd', blob: 'x'.repeat(600) } });
      expect(await store.journalAt('r1', [])).toEqual([]);
      expect(await store.journalAt('r2', [2, 5])).toEqual([
        { runId: 'r2', seq: 2, at: whole[0]?.at, event: { type: 'step.started', path: 'b', stepId: 'b', kind: 'set' } },
      ]);
      expect(await store.journalAt('nope', [1])).toEqual([]);
    });

    it('reads a journal without step values: no input, no outputs but a string message, the rest as written', async () => {
      await store.createRun(newRun('r1'));
      const events: JournalEvent[] = [
        { type: 'step.started', path: 'big', stepId: 'big', kind: 'set', input: { blob: 'x'.repeat(5000) } },
        { type: 'step.finished', path: 'big', status: 'succeeded', outputs: { blob: 'x'.repeat(5000), n: 1 } },
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello', extra: [1, 2] } },
        // Over SMALL_EVENT_BYTES, so a SQL store cuts it in SQL; the events above and below, in JS.
        { type: 'step.started', path: 'shout', stepId: 'shout', kind: 'log', input: { text: 'y'.repeat(5000) } },
        {
          type: 'step.finished',
          path: 'shout',
          status: 'succeeded',
          outputs: { message: 'loud', extra: 'y'.repeat(5000) },
        },
        { type: 'step.finished', path: 'small', status: 'failed', outputs: { n: 2 }, error: { message: 'no' } },
        { type: 'item.started', path: 'loop', index: 0 },
      ];
      for (const event of events) await store.append('r1', event);
      const all = await store.journal('r1');
      const without = await store.journal('r1', 0, 100, { values: false });
      expect(without).toEqual(all.map(withoutValues));
      expect(without.map((entry) => entry.event)).toEqual([
        { type: 'step.started', path: 'big', stepId: 'big', kind: 'set' },
        { type: 'step.finished', path: 'big', status: 'succeeded' },
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello' } },
        { type: 'step.started', path: 'shout', stepId: 'shout', kind: 'log' },
        { type: 'step.finished', path: 'shout', status: 'succeeded', outputs: { message: 'loud' } },
        { type: 'step.finished', path: 'small', status: 'failed', error: { message: 'no' } },
        { type: 'item.started', path: 'loop', index: 0 },
      ]);
    });

    it('returns copies: changing what was appended or read changes nothing stored', async () => {
      await store.createRun(newRun('r1'));
      const input = { id: 's1' };
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'call', input });
      input.id = 'changed';
      const [first] = await store.steps('r1');
      (first?.input as { id: string }).id = 'changed again';
      expect((await store.steps('r1'))[0]?.input).toEqual({ id: 's1' });
    });

    it('keeps any text a value holds as it was: quotes, backslashes, escapes, line separators, emoji', async () => {
      await store.createRun(newRun('r1'));
      const texts = [
        'say "hi"',
        'C:\\fleet\\',
        '\\u0000 and \\n as written',
        'a\u2028b\u2029c',
        'tab\there',
        '🚀 ünïcödé',
        '{"json": [1]}',
      ];
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set', input: { texts } });
      await store.append('r1', { type: 'item.started', path: 'b', index: 0 }, { buffered: true });
      await store.append('r1', { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { texts } });
      const journal = await store.journal('r1');
      expect(journal.map((entry) => entry.event)).toEqual([
        { type: 'step.started', path: 'a', stepId: 'a', kind: 'set', input: { texts } },
        { type: 'item.started', path: 'b', index: 0 },
        { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { texts } },
      ]);
    });

    it('refuses an event or result over the payload limit, naming the way out', async () => {
      await store.close();
      store = driven(await factory.open({ now: clock.now, maxPayloadBytes: 1024 }));
      await store.createRun(newRun('r1'));
      const big = { csv: 'x'.repeat(2000) };
      await expect(
        store.append('r1', { type: 'step.finished', path: 'export', status: 'succeeded', outputs: big }),
      ).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        message: expect.stringContaining('saveTo'),
      });
      await expect(store.setRunStatus('r1', 'succeeded', { outputs: big })).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
      });
      expect(await store.journal('r1')).toEqual([]);
      expect((await store.getRun('r1'))?.status).toBe('running');
    });

    it('keeps a journal view per run: the later one, read back as kept, gone with the run', async () => {
      await store.createRun(newRun('v1', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.createRun(newRun('v2'));
      expect(await store.journalView('v1')).toBeUndefined();
      const events: JournalEvent[] = [
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello' } },
        { type: 'step.started', path: 'check', stepId: 'check', kind: 'call', input: { n: 1 } },
        { type: 'request.sending', path: 'check', attempt: 1, operationId: 'sys.get', method: 'GET' },
        { type: 'step.finished', path: 'check', status: 'failed', error: { message: 'no' } },
      ];
      for (const event of events) await store.append('v1', event);
      const view = await foldJournalView(store, 'v1');
      expect(view).toMatchObject({ throughSeq: 5, logPaths: ['say'], log: [{ path: 'say', message: 'hello' }] });
      await store.saveJournalView('v1', view);
      expect(await store.journalView('v1')).toEqual(view);
      expect(await store.journalView('v2')).toBeUndefined();
      // A view through an earlier seq (a slower writer) does not replace it.
      await store.saveJournalView('v1', { ...view, throughSeq: 3, records: [] });
      expect(await store.journalView('v1')).toEqual(view);
      await expect(store.saveJournalView('nope', view)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await store.setRunStatus('v1', 'failed');
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(1);
      expect(await store.journalView('v1')).toBeUndefined();
    });

    it('keeps a view of many records in parts, and a later, shorter view leaves none of the longer one', async () => {
      await store.createRun(newRun('v1'));
      const record = (index: number) => ({
        path: `systems[${index}]`,
        stepId: 'systems',
        kind: 'item',
        status: 'succeeded' as const,
        attempts: 0,
        startedAt: '2026-01-01T00:00:00.000Z',
      });
      const long = {
        throughSeq: 10,
        records: Array.from({ length: 2 * VIEW_PART_RECORDS + 1 }, (_, index) => record(index)),
        logPaths: ['say'],
        log: [{ at: '2026-01-01T00:00:00.000Z', path: 'say', message: 'hello' }],
      };
      await store.saveJournalView('v1', long);
      expect(await store.journalView('v1')).toEqual(long);
      const short = { throughSeq: 12, records: [record(7)], logPaths: [], log: [] };
      await store.saveJournalView('v1', short);
      expect(await store.journalView('v1')).toEqual(short);
      // An earlier view, however long, does not replace it, nor add parts to it.
      await store.saveJournalView('v1', long);
      expect(await store.journalView('v1')).toEqual(short);
    });

    it('continues a kept journal view with the entries after it: the fold of the whole journal', async () => {
      await store.createRun(newRun('v1'));
      const before: JournalEvent[] = [
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'first' } },
        { type: 'item.started', path: 'systems', index: 0 },
        { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call', input: { n: 1 } },
        { type: 'request.sending', path: 'systems[0].update', attempt: 1, operationId: 'sys.update', method: 'POST' },
        { type: 'step.finished', path: 'systems[0].update', status: 'interrupted' },
      ];
      for (const event of before) await store.append('v1', event);
      // Kept as the run ended, then resumed: the step re-runs, the log step writes again.
      expect(await checkpointJournalView(store, 'v1', 1)).toBe(6);
      const after: JournalEvent[] = [
        { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call', input: { n: 1 } },
        { type: 'request.answered', path: 'systems[0].update', attempt: 1, httpStatus: 202, location: '/ops/7' },
        { type: 'step.finished', path: 'systems[0].update', status: 'succeeded', outputs: { ok: true } },
        { type: 'item.finished', path: 'systems', index: 0, status: 'succeeded' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'second' } },
      ];
      for (const event of after) await store.append('v1', event);
      const scratch = await foldJournalView(store, 'v1');
      const continued = await foldJournalView(store, 'v1', await store.journalView('v1'));
      expect(continued).toEqual(scratch);
      expect(continued.log.map((line) => line.message)).toEqual(['first', 'second']);
      expect(continued.records.find((record) => record.path === 'systems[0].update')).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        location: '/ops/7',
        startedSeq: 7,
        finishedSeq: 9,
      });
      // The next checkpoint starts from the kept one; none is written when nothing followed it.
      expect(await checkpointJournalView(store, 'v1', 1)).toBe(11);
      expect(await store.journalView('v1')).toEqual(scratch);
      expect(await checkpointJournalView(store, 'v1', 1)).toBeUndefined();
      // A journal shorter than the threshold keeps no view.
      await store.createRun(newRun('short'));
      for (const event of before) await store.append('short', event);
      expect(await checkpointJournalView(store, 'short', 7)).toBeUndefined();
      expect(await store.journalView('short')).toBeUndefined();
      expect(await checkpointJournalView(store, 'short', 6)).toBe(6);
    });

    it('reads the journal after a seq: only what a follower has not seen', async () => {
      await store.createRun(newRun('f1'));
      for (const path of ['a', 'b', 'c'])
        await store.append('f1', { type: 'step.started', path, stepId: path, kind: 'set' });
      expect((await store.journal('f1', 1)).map((entry) => [entry.seq, entry.event.path])).toEqual([
        [2, 'b'],
        [3, 'c'],
      ]);
      expect(await store.journal('f1', 3)).toEqual([]);
    });
  });
}
