/**
 * `fleetbook runs show -o json` of a fleet's run: the steps folded without values, their inputs
 * and outputs read back by seq a batch at a time as the JSON is written. The text is the one the
 * journal folded with its values gives, byte for byte.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openRunStore, runStoreFileName } from '../../src/store/open-run-store.js';
import { buildStepTree, checkpointJournalView, foldJournal, logLineCollector } from '../../src/store/index.js';
import type { JournalEntry, JournalEvent, RunStore } from '../../src/store/types.js';
import { newRun } from '../store/run-store-contract.js';
import { runCli } from '../support/cli.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'fleetbook-show-json-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(home, { recursive: true, force: true });
});

const RUN = 'run-fleet-json';
/** Over the 512 bytes from which SQLite cuts a step event's values in SQL. */
const big = (label: string) => ({ label, text: `${label} `.repeat(80) });

/**
 * A rolling update of `systems` systems as the engine journals it: a `call` with input, request
 * and answer; a failed `assert` re-run as a quiet step; a `log:` step; per system a quiet `set`
 * with input, an `update` (one failed, one interrupted and re-started with another input, one
 * still running, one with outputs spilled to a file, one with `null` outputs) and a `log:` line;
 * an item whose steps each journal one entry (no item start).
 */
function fleetJournal(systems: number): JournalEvent[] {
  const events: JournalEvent[] = [
    { type: 'step.started', path: 'catalog', stepId: 'catalog', kind: 'call', input: big('catalog input') },
    { type: 'request.sending', path: 'catalog', attempt: 1, operationId: 'catalog.list', method: 'GET' },
    { type: 'request.answered', path: 'catalog', attempt: 1, httpStatus: 200, body: { n: 1 } },
    { type: 'step.finished', path: 'catalog', status: 'succeeded', outputs: big('catalog outputs') },
    { type: 'step.started', path: 'check', stepId: 'check', kind: 'assert', input: { that: false } },
    { type: 'step.finished', path: 'check', status: 'failed', error: { message: 'not yet', code: 'ASSERT' } },
    { type: 'step.finished', path: 'check', stepId: 'check', kind: 'assert', status: 'succeeded' },
    {
      type: 'step.finished',
      path: 'hello',
      stepId: 'hello',
      kind: 'log',
      status: 'succeeded',
      outputs: { message: `updating ${systems} systems`, extra: big('log extra') },
    },
    { type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach', input: { items: systems } },
  ];
  for (let index = 0; index < systems; index += 1) {
    const path = `systems[${index}]`;
    const update = `${path}.update`;
    if (index === 5) {
      // Every step of this item journals one entry: its end is its only entry.
      events.push(
        { type: 'step.finished', path: `${path}.row`, stepId: 'row', kind: 'set', status: 'succeeded', outputs: 5 },
        { type: 'item.finished', path: 'systems', index, status: 'succeeded' },
      );
      continue;
    }
    events.push(
      { type: 'item.started', path: 'systems', index },
      {
        type: 'step.finished',
        path: `${path}.row`,
        stepId: 'row',
        kind: 'set',
        status: 'succeeded',
        input: { system: `s-${index}` },
        outputs: index % 7 === 0 ? big(`row ${index}`) : { system: `s-${index}`, ok: true },
      },
      { type: 'step.started', path: update, stepId: 'update', kind: 'call', input: { system: `s-${index}` } },
      { type: 'request.sending', path: update, attempt: 1, operationId: 'sys.update', method: 'POST' },
    );
    if (index === 3) continue; // Still running when the run stopped.
    if (index === 2) {
      events.push(
        { type: 'step.finished', path: update, status: 'interrupted' },
        { type: 'step.started', path: update, stepId: 'update', kind: 'call', input: { system: 's-2', again: true } },
        { type: 'request.sending', path: update, attempt: 2, operationId: 'sys.update', method: 'POST' },
      );
    }
    events.push({ type: 'request.answered', path: update, attempt: 1, httpStatus: 202, location: `/ops/op-${index}` });
    const failed = index === 1;
    const outputs =
      index === 4
        ? { $outputsFile: `/home/outputs/${RUN}/systems_4_.update.json`, bytes: 900_000 }
        : index === 6
          ? null
          : { operation: `op-${index}`, body: index % 3 === 0 ? big(`answer ${index}`) : { n: index } };
    events.push(
      failed
        ? { type: 'step.finished', path: update, status: 'failed', error: { message: 'refused', httpStatus: 409 } }
        : { type: 'step.finished', path: update, status: 'succeeded', outputs },
      {
        type: 'step.finished',
        path: `${path}.note`,
        stepId: 'note',
        kind: 'log',
        status: 'succeeded',
        outputs: { message: `s-${index} done` },
      },
      { type: 'item.finished', path: 'systems', index, status: failed ? 'failed' : 'succeeded' },
    );
  }
  return events;
}

async function seed(store: RunStore, systems: number): Promise<void> {
  await store.createRun(newRun(RUN, { startedAt: new Date(Date.now() - 60_000).toISOString() }));
  for (const event of fleetJournal(systems)) await store.append(RUN, event, { buffered: true });
  await store.setRunStatus(RUN, 'interrupted');
}

/** What `-o json` printed before values were read back: the journal folded with its values. */
function foldedWithValues(journal: readonly JournalEntry[], run: unknown): string {
  const log = logLineCollector();
  for (const entry of journal) log.add(entry);
  return `${JSON.stringify({ run, steps: buildStepTree(foldJournal(journal)), log: log.lines })}\n`;
}

async function showJson(): Promise<string> {
  const shown = await runCli(['runs', 'show', RUN, '-o', 'json'], { env: { FLEETBOOK_HOME: home } });
  expect(shown.stderr).toBe('');
  expect(shown.code).toBe(0);
  return shown.stdout;
}

/** The journal as it is (read before any reads are counted). */
async function journalOf(): Promise<JournalEntry[]> {
  const store = await openRunStore({ home });
  const journal = await store.journal(RUN);
  await store.close();
  return journal;
}

/** Prints the same text as `journal` folded with its values gives. */
async function expectAsFoldedWithValues(journal: readonly JournalEntry[]): Promise<string> {
  const stdout = await showJson();
  // The run's part is what it always was; what is compared is every step and log line.
  const { run } = JSON.parse(stdout) as { run: unknown };
  expect(stdout).toBe(foldedWithValues(journal, run));
  return stdout;
}

/** The SQL reads of many rows made from here on, by the text of the statement: their parameters. */
function spyOnReads(): (part: string) => unknown[][] {
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { all: (...args: unknown[]) => unknown };
  probe.close();
  const all = vi.spyOn(statement, 'all');
  return (part) =>
    all.mock.calls.filter((_, index) => (all.mock.contexts[index] as { source: string }).source.includes(part));
}

/** The statements of a journal read with values, without them, and by seq. */
const WITH_VALUES = 'event_json AS eventJson FROM journal WHERE run_id = ? AND seq > ?';
const WITHOUT_VALUES = 'END AS eventJson FROM journal';
const BY_SEQ = 'json_each';

describe('fleetbook runs show -o json: values read back by seq', () => {
  it('prints what the journal folded with its values prints, byte for byte, reading the values in batches of 1,000 steps', async () => {
    // 1,200 systems: some 3,600 steps with values, so four reads by seq.
    const store = await openRunStore({ home });
    await seed(store, 1200);
    await store.close();
    const journal = await journalOf();
    const reads = spyOnReads();
    const stdout = await expectAsFoldedWithValues(journal);
    expect(reads(BY_SEQ)).toHaveLength(4);
    // The journal was folded without its values, never read with them.
    expect(reads(WITHOUT_VALUES).length).toBeGreaterThan(0);
    expect(reads(WITH_VALUES)).toHaveLength(0);
    const shown = JSON.parse(stdout) as { steps: Array<{ path: string; input?: unknown }> };
    expect(shown.steps.map((step) => step.path)).toEqual(['catalog', 'check', 'hello', 'systems']);
    expect(shown.steps[0]?.input).toEqual(big('catalog input'));
    expect(shown.steps[1]).not.toHaveProperty('input');
    expect(stdout).toContain('"input":{"system":"s-2","again":true}');
    expect(stdout).toContain(`"outputs":{"$outputsFile":"/home/outputs/${RUN}/systems_4_.update.json"`);
    expect(stdout).toContain('"outputs":null');
  });

  it('reads the view the store kept when it notes the seqs, and folds the journal when an older one does not', async () => {
    const store = await openRunStore({ home });
    await seed(store, 30);
    const throughSeq = await checkpointJournalView(store, RUN, 1);
    // Resumed after the view was kept: system 3's update ends, and a log line is written.
    await store.markResumed(RUN);
    const resumed: JournalEvent[] = [
      { type: 'step.finished', path: 'systems[3].update', status: 'succeeded', outputs: big('late answer') },
      { type: 'item.finished', path: 'systems', index: 3, status: 'succeeded' },
      { type: 'step.finished', path: 'systems', status: 'failed', outputs: { failed: 1 } },
      {
        type: 'step.finished',
        path: 'bye',
        stepId: 'bye',
        kind: 'log',
        status: 'succeeded',
        outputs: { message: 'x' },
      },
    ];
    for (const event of resumed) await store.append(RUN, event);
    await store.setRunStatus(RUN, 'failed', { error: { message: '1 system failed' } });
    const view = await store.journalView(RUN);
    await store.close();
    expect(view?.records.find((record) => record.path === 'catalog')).toMatchObject({ startedSeq: 1, finishedSeq: 4 });
    const journal = await journalOf();

    let reads = spyOnReads();
    const fromView = await expectAsFoldedWithValues(journal);
    // From the view: only the entries after it are folded, then the values read by seq.
    expect(reads(WITHOUT_VALUES).map((parameters) => parameters[1])).toEqual([throughSeq]);
    expect(reads(BY_SEQ)).toHaveLength(1);

    // A view kept by an older Fleetbook notes no startedSeq: the journal is folded instead.
    const file = new Database(join(home, runStoreFileName));
    const { json } = file.prepare('SELECT view_json AS json FROM journal_views WHERE run_id = ?').get(RUN) as {
      json: string;
    };
    expect(json).toContain('"startedSeq"');
    file
      .prepare('UPDATE journal_views SET view_json = ? WHERE run_id = ?')
      .run(json.replace(/,"startedSeq":\d+/g, ''), RUN);
    file.close();
    vi.restoreAllMocks();
    reads = spyOnReads();
    expect(await showJson()).toBe(fromView);
    expect(reads(WITHOUT_VALUES).map((parameters) => parameters[1])).toEqual([0]);
  });

  it('a step that ended twice without starting again (a journal written by hand) is printed as its whole journal says', async () => {
    const store = await openRunStore({ home });
    await seed(store, 12);
    // The first ending's outputs count: the second has none.
    await store.append(RUN, { type: 'step.finished', path: 'catalog', status: 'succeeded' });
    await store.close();
    const journal = await journalOf();
    const reads = spyOnReads();
    const stdout = await expectAsFoldedWithValues(journal);
    expect(reads(BY_SEQ)).toHaveLength(0);
    expect((JSON.parse(stdout) as { steps: Array<{ outputs?: unknown }> }).steps[0]?.outputs).toEqual(
      big('catalog outputs'),
    );
  });
});
