/**
 * A run that ends keeps its journal folded without values in the store (what `runs show`
 * prints), when its journal is long enough; a resumed run's view goes on from the one kept.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { foldJournalView } from '../store/index.js';
import { createVirtualClock } from '../timers/index.js';
import { fakeClient, fastRun, playbook, step, t } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';

const quietLogger = () =>
  createLogger({ level: 'debug', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });

/** Three items, the last of which fails its check until `FLEETBOOK_VAR_FIXED` is set. */
const book = playbook([
  step({
    id: 'loop',
    kind: 'forEach',
    items: t([1, 2, 3]),
    as: 'n',
    concurrency: t(1),
    steps: [
      step({ id: 'double', kind: 'set', values: t({ value: '${{ n * 2 }}' }) }),
      step({ id: 'check', kind: 'assert', condition: t("${{ n < 3 or env.FLEETBOOK_VAR_FIXED = 'yes' }}") }),
    ],
  }),
]);

describe('the journal view a run keeps', () => {
  it('is written when the run ends, through its last entry, as the fold of its whole journal', async () => {
    const run = await fastRun(book, { journalViewMinEntries: 1 });
    expect(run.result.status).toBe('failed');
    const { runId } = run.result;
    const kept = await run.store.journalView(runId);
    expect(kept?.throughSeq).toBe((await run.store.journal(runId)).length);
    expect(kept).toEqual(await foldJournalView(run.store, runId));
    expect(kept?.records.find((record) => record.path === 'loop[2].check')?.status).toBe('failed');
  });

  it('is not written for a journal shorter than the threshold (50,000 entries by default)', async () => {
    const run = await fastRun(book);
    expect(await run.store.journalView(run.result.runId)).toBeUndefined();
    const short = await fastRun(book, { journalViewMinEntries: 1_000 });
    expect(await short.store.journalView(short.result.runId)).toBeUndefined();
  });

  it('of a resumed run goes on from the view kept before: the fold of the whole journal again', async () => {
    const run = await fastRun(book, { journalViewMinEntries: 1 });
    const { runId } = run.result;
    const before = await run.store.journalView(runId);
    const resumed = await resumeRun(book, {
      runId,
      client: fakeClient({}),
      store: run.store,
      logger: quietLogger(),
      env: { FLEETBOOK_VAR_FIXED: 'yes' },
      journalViewMinEntries: 1,
      clock: createVirtualClock(Date.parse('2026-01-01T01:00:00Z')),
    });
    expect(resumed.status).toBe('succeeded');
    const kept = await run.store.journalView(runId);
    expect(kept?.throughSeq).toBeGreaterThan(before?.throughSeq ?? Infinity);
    expect(kept).toEqual(await foldJournalView(run.store, runId));
    expect(kept?.records.find((record) => record.path === 'loop[2].check')?.status).toBe('succeeded');
  });
});
