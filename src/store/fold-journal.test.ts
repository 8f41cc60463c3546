import { describe, expect, it } from 'vitest';
import { foldJournal, journalPages } from './fold-journal.js';
import type { JournalEntry, JournalEvent } from './types.js';

/** A journal with one second between entries, so times show which event set them. */
function journal(...events: JournalEvent[]): JournalEntry[] {
  return events.map((event, index) => ({
    runId: 'r1',
    seq: index + 1,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    event,
  }));
}
const second = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const location = '/data-services/v1beta1/async-operations/op-1';

describe('foldJournal', () => {
  it('folds a finished call step: attempts, location, outcome, outputs, times', () => {
    const [step, ...rest] = foldJournal(
      journal(
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call', input: { id: 's1' } },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 1,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
        {
          type: 'request.failed',
          path: 'update',
          attempt: 1,
          error: { message: 'busy', httpStatus: 503 },
          outcomeUnknown: false,
        },
        { type: 'retry.scheduled', path: 'update', attempt: 1, delayMs: 2000, reason: '503' },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 2,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
        { type: 'request.answered', path: 'update', attempt: 2, httpStatus: 202, location },
        { type: 'operation.progress', path: 'update', location, progressPercent: 40 },
        { type: 'operation.finished', path: 'update', location, outcome: 'SUCCEEDED' },
        { type: 'step.finished', path: 'update', status: 'succeeded', outputs: { status: 202 } },
      ),
    );
    expect(rest).toEqual([]);
    expect(step).toEqual({
      path: 'update',
      stepId: 'update',
      kind: 'call',
      status: 'succeeded',
      attempts: 2,
      startedAt: second(0),
      endedAt: second(8),
      input: { id: 's1' },
      outputs: { status: 202 },
      location,
      operationOutcome: 'SUCCEEDED',
    });
  });

  it('leaves a started step without a finish running, with the Location to re-attach to', () => {
    const steps = foldJournal(
      journal(
        { type: 'step.started', path: 'catalog', stepId: 'catalog', kind: 'call' },
        { type: 'step.finished', path: 'catalog', status: 'succeeded', outputs: { body: { items: [] } } },
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 1,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
        { type: 'request.answered', path: 'update', attempt: 1, httpStatus: 202, location },
      ),
    );
    expect(steps.map((s) => [s.path, s.status])).toEqual([
      ['catalog', 'succeeded'],
      ['update', 'running'],
    ]);
    expect(steps[1]).toMatchObject({ location, attempts: 1 });
    expect(steps[1]).not.toHaveProperty('unansweredRequest');
    expect(steps[1]).not.toHaveProperty('endedAt');
  });

  it('keeps a write with no journaled answer as the unanswered request, through a restart of the step', () => {
    const sending: JournalEvent = {
      type: 'request.sending',
      path: 'update',
      attempt: 1,
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
      idempotency: { id: 's1', catalogVersion: '2.4.0' },
    };
    const started: JournalEvent = { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' };
    const dropped = { message: 'socket hang up', code: 'UND_ERR_SOCKET' };
    const [step] = foldJournal(
      journal(
        started,
        sending,
        { type: 'request.failed', path: 'update', attempt: 1, error: dropped, outcomeUnknown: true },
        started,
      ),
    );
    expect(step).toMatchObject({
      status: 'running',
      attempts: 1,
      unansweredRequest: {
        attempt: 1,
        operationId: 'privateCloud.runSoftwareUpdate',
        method: 'POST',
        idempotency: { id: 's1', catalogVersion: '2.4.0' },
        error: dropped,
      },
    });
    // Reconciliation found the operation running and attached to it.
    const [attached] = foldJournal(
      journal(started, sending, started, { type: 'operation.progress', path: 'update', location }),
    );
    expect(attached).toMatchObject({ location });
    expect(attached).not.toHaveProperty('unansweredRequest');
  });

  it('keeps the unanswered write of a step that ended interrupted or failed, drops it on success', () => {
    const events = (status: 'interrupted' | 'failed' | 'succeeded'): JournalEvent[] => [
      { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
      {
        type: 'request.sending',
        path: 'update',
        attempt: 1,
        operationId: 'privateCloud.runSoftwareUpdate',
        method: 'POST',
      },
      { type: 'step.finished', path: 'update', status },
    ];
    expect(foldJournal(journal(...events('interrupted')))[0]).toMatchObject({
      status: 'interrupted',
      unansweredRequest: { attempt: 1 },
    });
    expect(foldJournal(journal(...events('failed')))[0]).toMatchObject({
      status: 'failed',
      unansweredRequest: { attempt: 1 },
    });
    expect(foldJournal(journal(...events('succeeded')))[0]).not.toHaveProperty('unansweredRequest');
  });

  it('a failure known not to have reached the server leaves nothing to reconcile', () => {
    const [step] = foldJournal(
      journal(
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 1,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
        {
          type: 'request.failed',
          path: 'update',
          attempt: 1,
          error: { message: 'refused', httpStatus: 409 },
          outcomeUnknown: false,
        },
      ),
    );
    expect(step).not.toHaveProperty('unansweredRequest');
  });

  it('a re-run of a failed step drops its old ending and the old operation once it sends again', () => {
    const steps = foldJournal(
      journal(
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 1,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
        { type: 'request.answered', path: 'update', attempt: 1, httpStatus: 202, location },
        { type: 'operation.finished', path: 'update', location, outcome: 'FAILED' },
        { type: 'step.finished', path: 'update', status: 'failed', error: { message: 'operation failed' } },
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
      ),
    );
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ status: 'running', startedAt: second(5), location, operationOutcome: 'FAILED' });
    expect(steps[0]).not.toHaveProperty('error');
    expect(steps[0]).not.toHaveProperty('endedAt');
    const [resent] = foldJournal(
      journal(
        { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
        { type: 'request.answered', path: 'update', attempt: 1, httpStatus: 202, location },
        { type: 'operation.finished', path: 'update', location, outcome: 'FAILED' },
        {
          type: 'request.sending',
          path: 'update',
          attempt: 1,
          operationId: 'privateCloud.runSoftwareUpdate',
          method: 'POST',
        },
      ),
    );
    expect(resent).not.toHaveProperty('location');
    expect(resent).not.toHaveProperty('operationOutcome');
  });

  it('makes a record per loop item, between the loop and the item steps', () => {
    const steps = foldJournal(
      journal(
        { type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' },
        { type: 'item.started', path: 'systems', index: 0 },
        { type: 'step.started', path: 'systems[0].precheck', stepId: 'precheck', kind: 'call' },
        { type: 'step.finished', path: 'systems[0].precheck', status: 'failed', error: { message: 'stale' } },
        { type: 'item.finished', path: 'systems', index: 0, status: 'failed' },
        { type: 'item.started', path: 'systems', index: 1 },
      ),
    );
    expect(steps.map((s) => [s.path, s.kind, s.status])).toEqual([
      ['systems', 'forEach', 'running'],
      ['systems[0]', 'item', 'failed'],
      ['systems[0].precheck', 'call', 'failed'],
      ['systems[1]', 'item', 'running'],
    ]);
    expect(steps[1]).toMatchObject({ stepId: 'systems', startedAt: second(1), endedAt: second(4) });
  });

  it('ignores events of a step whose start is missing rather than inventing one', () => {
    expect(foldJournal(journal({ type: 'step.finished', path: 'ghost', status: 'succeeded' }))).toEqual([]);
  });

  it("folds a quiet step's one entry into a finished record: its start and end at once", () => {
    const steps = foldJournal(
      journal(
        { type: 'step.started', path: 'loop', stepId: 'loop', kind: 'forEach' },
        {
          type: 'step.finished',
          path: 'loop[0].double',
          stepId: 'double',
          kind: 'set',
          status: 'succeeded',
          outputs: { value: 2 },
        },
        { type: 'item.finished', path: 'loop', index: 0, status: 'succeeded' },
        {
          type: 'step.finished',
          path: 'loop[1].say',
          stepId: 'say',
          kind: 'log',
          status: 'succeeded',
          input: { message: 'hi' },
          outputs: { message: 'hi' },
        },
      ),
    );
    expect(steps.map((s) => [s.path, s.kind, s.status])).toEqual([
      ['loop', 'forEach', 'running'],
      ['loop[0].double', 'set', 'succeeded'],
      ['loop[0]', 'item', 'succeeded'],
      ['loop[1].say', 'log', 'succeeded'],
    ]);
    expect(steps[1]).toEqual({
      path: 'loop[0].double',
      stepId: 'double',
      kind: 'set',
      status: 'succeeded',
      attempts: 0,
      startedAt: second(1),
      endedAt: second(1),
      outputs: { value: 2 },
    });
    // An item without its start: made from its end, with the loop's step id.
    expect(steps[2]).toMatchObject({ stepId: 'loop', startedAt: second(2), endedAt: second(2) });
    expect(steps[3]).toMatchObject({ input: { message: 'hi' }, endedAt: second(3) });
  });

  it("a quiet step's one entry after an earlier run's ending replaces it (resume ran it again)", () => {
    const steps = foldJournal(
      journal(
        // An older journal: started and finished entries, the step failed.
        { type: 'step.started', path: 'check', stepId: 'check', kind: 'assert', input: { that: false } },
        { type: 'step.finished', path: 'check', status: 'failed', error: { message: 'no' } },
        { type: 'step.started', path: 'next', stepId: 'next', kind: 'set' },
        { type: 'step.finished', path: 'next', status: 'skipped' },
        // The resumed run journals the quiet step's one entry.
        { type: 'step.finished', path: 'check', stepId: 'check', kind: 'assert', status: 'succeeded' },
      ),
    );
    expect(steps.map((s) => [s.path, s.status])).toEqual([
      ['next', 'skipped'],
      ['check', 'succeeded'],
    ]);
    expect(steps[1]).not.toHaveProperty('error');
    expect(steps[1]).not.toHaveProperty('input');
  });

  it('without values, notes the seqs of the entries holding each step input and outputs, where those would be', () => {
    const entries = journal(
      { type: 'step.started', path: 'update', stepId: 'update', kind: 'call', input: { system: 's-1' } },
      { type: 'request.sending', path: 'update', attempt: 1, operationId: 'sys.update', method: 'POST' },
      { type: 'step.finished', path: 'update', status: 'interrupted' },
      // Resumed: started again, answered, finished with outputs.
      { type: 'step.started', path: 'update', stepId: 'update', kind: 'call', input: { system: 's-1', n: 2 } },
      { type: 'request.answered', path: 'update', attempt: 1, httpStatus: 202, location },
      { type: 'step.finished', path: 'update', status: 'succeeded', outputs: { done: true } },
      { type: 'step.finished', path: 'note', stepId: 'note', kind: 'set', status: 'succeeded', input: { a: 1 } },
      { type: 'item.started', path: 'loop', index: 0 },
    );
    const withValues = foldJournal(entries);
    const without = foldJournal(entries, { values: false });
    expect(without.map((record) => [record.path, record.startedSeq, record.finishedSeq])).toEqual([
      ['update', 4, 6],
      ['note', 7, 7],
      ['loop[0]', undefined, undefined],
    ]);
    // The seqs sit where the values do: the fold with values, member for member.
    const named = (key: string) => (key === 'startedSeq' ? 'input' : key === 'finishedSeq' ? 'outputs' : key);
    expect(without.map((record) => Object.keys(record).map(named))).toEqual([
      Object.keys(withValues[0] ?? {}),
      [...Object.keys(withValues[1] ?? {}), 'outputs'],
      Object.keys(withValues[2] ?? {}),
    ]);
    expect(withValues[1]).not.toHaveProperty('outputs');
  });

  it('without values, a step that ends twice without starting again notes no start: which outputs count is unknown', () => {
    const entries = journal(
      { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
      { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'first' } },
      { type: 'step.finished', path: 'say', status: 'succeeded' },
    );
    expect(foldJournal(entries)[0]?.outputs).toEqual({ message: 'first' });
    const [record] = foldJournal(entries, { values: false });
    expect(record).not.toHaveProperty('startedSeq');
    expect(record?.finishedSeq).toBe(3);
  });
});

describe('journalPages', () => {
  /** A journal of `count` entries whose reads are logged; each page answers when `release` is called. */
  function slowSource(count: number) {
    const asked: number[] = [];
    const pending: Array<() => void> = [];
    const source = {
      journal: (runId: string, afterSeq = 0, limit = count): Promise<JournalEntry[]> => {
        asked.push(afterSeq);
        const page = Array.from({ length: Math.max(0, Math.min(limit, count - afterSeq)) }, (_, index) => ({
          runId,
          seq: afterSeq + index + 1,
          at: '2026-11-25T20:00:00.000Z',
          event: { type: 'item.started', path: 'loop', index: afterSeq + index } as JournalEvent,
        }));
        return new Promise((resolve) => pending.push(() => resolve(page)));
      },
    };
    const release = () => pending.shift()?.();
    return { source, asked, release };
  }

  it('asks for the next page before handing this one over, so the store makes it while the reader works', async () => {
    const { source, asked, release } = slowSource(5);
    const pages = journalPages(source, 'r1', 2)[Symbol.asyncIterator]();
    const first = pages.next();
    release();
    expect((await first).value.map((entry: JournalEntry) => entry.seq)).toEqual([1, 2]);
    // The reader holds page 1; page 2 is already asked for.
    expect(asked).toEqual([0, 2]);
    const second = pages.next();
    release();
    expect((await second).value.map((entry: JournalEntry) => entry.seq)).toEqual([3, 4]);
    const third = pages.next();
    release();
    expect((await third).value.map((entry: JournalEntry) => entry.seq)).toEqual([5]);
    // A short page is the last: nothing more asked.
    expect((await pages.next()).done).toBe(true);
    expect(asked).toEqual([0, 2, 4]);
  });

  it('throws a page read failure where the page is awaited, not as an unhandled rejection', async () => {
    let reads = 0;
    const source = {
      journal: async (runId: string, afterSeq = 0): Promise<JournalEntry[]> => {
        reads += 1;
        if (reads === 2) throw new Error('connection lost');
        return [
          {
            runId,
            seq: afterSeq + 1,
            at: '2026-11-25T20:00:00.000Z',
            event: { type: 'item.started', path: 'loop', index: 0 },
          },
        ];
      },
    };
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of journalPages(source, 'r1', 1)) {
          // The reader is slow: the failed read has settled before it asks for the page.
          await new Promise((resolve) => setTimeout(resolve, 10));
          seen.push(...page.map((entry) => entry.seq));
        }
      })(),
    ).rejects.toThrow('connection lost');
    expect(seen).toEqual([1]);
  });
});
