/**
 * A loop's items after the loop: its `step.finished` journals them without their steps (each
 * item's steps are journaled already), an ended item keeps in memory only the step views the
 * playbook reads after the loop, and a resume rebuilds them from the items' own entries, from
 * a journal of either shape (items with their steps, as journals written before this were).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { loadPlaybook, loopItemReads, type Playbook, type StepBase } from '../playbook/index.js';
import { builtinStepDefinitions, createStepRegistry, defineLeaf } from '../steps/index.js';
import { createMemoryRunStore, type JournalEvent, type RunStore } from '../store/index.js';
import { createVirtualClock } from '../timers/index.js';
import { fakeClient, fastRun } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';

/** What the `probe` step saw of `steps` (none of its fields is an expression: it reads nothing the loader sees). */
let seen: Record<string, unknown> | undefined;
/** The probe fails once while set, so the run ends failed after the loop and can be resumed. */
let failProbe = false;

const probeStep = defineLeaf<StepBase & { kind: 'probe' }>({
  kind: 'probe',
  description: 'Captures the steps it can read (tests only).',
  fields: { probe: { type: 'string', description: 'A label.' } },
  canWrite: false,
  examples: [],
  normalise: () => ({}),
  async prepare({ context }) {
    const steps = structuredClone(context().steps) as Record<string, unknown>;
    return {
      attempt: async () => {
        if (failProbe) {
          failProbe = false;
          throw new Error('the probe fails this once');
        }
        seen = steps;
        return { outputs: {} };
      },
    };
  },
});

const registry = createStepRegistry([...builtinStepDefinitions, probeStep]);
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-loop-items-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string): Playbook {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  const { playbook, problems } = loadPlaybook(file, { registry });
  expect(problems).toEqual([]);
  if (!playbook) throw new Error('not loaded');
  return playbook;
}

/** A loop of three items, each with a large `before` and a small `report`; after it, one field of `report` is read. */
const fleet = (readAfter: string) => `name: loop-items
defaults: { retry: { maxAttempts: 1 } }
steps:
  - id: systems
    forEach: ["a", "b", "c"]
    as: name
    steps:
      - id: before
        set: { blob: "\${{ $pad('', 2000, 'x') }}" }
      - id: work
        block:
          - id: report
            set: { row: "\${{ name & ' done' }}", size: "\${{ $length(steps.before.outputs.blob) }}" }
  - id: look
    probe: after the loop
  - id: table
    set:
      rows: "${readAfter}"
      failed: "\${{ [steps.systems.outputs.items[status = 'failed'].item] }}"
outputs:
  rows: \${{ steps.table.outputs.rows }}
`;

const quiet = () =>
  createLogger({ level: 'error', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });

const resume = (book: Playbook, store: RunStore, runId: string) =>
  resumeRun(book, {
    runId,
    store,
    client: fakeClient({}),
    logger: quiet(),
    env: {},
    outputsDir: '/nonexistent/fleetbook-fast-tests',
    clock: createVirtualClock(Date.parse('2026-01-01T01:00:00Z')),
    registry,
  });

const loopItems = () => (seen?.systems as { outputs: { items: Array<Record<string, unknown>> } }).outputs.items;
const loopEnd = (events: JournalEvent[]) =>
  events.find((event) => event.type === 'step.finished' && event.path === 'systems') as
    (JournalEvent & { outputs: { items: unknown[] } }) | undefined;

// The first load compiles the platform description and the step schemas: seconds on a loaded machine.
describe('a loop after it has ended', { timeout: 60_000 }, () => {
  it("journals its end without the items' steps, and keeps in memory only the step views read after it", async () => {
    seen = undefined;
    const run = await fastRun(load(fleet('${{ steps.systems.outputs.items.steps.report.outputs.row }}')), {
      registry,
    });
    expect(run.result.status).toBe('succeeded');
    expect(run.result.outputs).toEqual({ rows: ['a done', 'b done', 'c done'] });
    expect(loopEnd(run.events)?.outputs).toEqual({
      items: [
        { index: 0, item: 'a', status: 'succeeded' },
        { index: 1, item: 'b', status: 'succeeded' },
        { index: 2, item: 'c', status: 'succeeded' },
      ],
      succeeded: 3,
      failed: 0,
      notStarted: 0,
    });
    // `before` (read by no expression after the loop) and `work` were released with the item.
    expect(loopItems().map((item) => Object.keys(item.steps as object))).toEqual([['report'], ['report'], ['report']]);
    expect(loopItems()[1]).toEqual({
      index: 1,
      item: 'b',
      status: 'succeeded',
      steps: { report: { status: 'succeeded', outputs: { row: 'b done', size: 2000 } } },
    });
  });

  it('keeps every step view when a read after the loop cannot be followed', async () => {
    seen = undefined;
    const run = await fastRun(load(fleet('${{ $keys(steps.systems.outputs.items[0].steps) }}')), { registry });
    expect(run.result.outputs).toEqual({ rows: ['before', 'report', 'work'] });
    expect(Object.keys(loopItems()[2]?.steps as object)).toEqual(['before', 'report', 'work']);
    seen = undefined;
    const whole = await fastRun(load(fleet('${{ $count($keys($$.steps)) }}')), { registry });
    expect(whole.result.status).toBe('succeeded');
    expect(Object.keys(loopItems()[0]?.steps as object)).toEqual(['before', 'report', 'work']);
  });

  it('follows the paths read after the loop: a step id kept, a filter on items reading a step keeps everything', () => {
    const readsOf = (rows: string) => loopItemReads(load(fleet(rows)), registry).of('systems');
    expect(readsOf('${{ steps.systems.outputs.items.steps.report.outputs.row }}')).toEqual(new Set(['report']));
    expect(readsOf("${{ steps.systems.outputs.items[status = 'failed'].steps.report }}")).toEqual(new Set(['report']));
    expect(readsOf('${{ steps.systems.outputs.succeeded }}')).toEqual(new Set());
    expect(readsOf("${{ steps.systems.outputs.items[steps.before.status = 'failed'].item }}")).toBe('all');
    expect(readsOf('${{ steps.systems.outputs.items[$count($) > 0].item }}')).toBe('all');
    expect(readsOf('${{ $map(steps.systems.outputs.items, function($i) { $i.index }) }}')).toBe('all');
    expect(readsOf('${{ $keys($$) }}')).toBe('all');
  });

  it("keeps everything of a loop inside another loop's items kept whole: they can be read through a variable", async () => {
    const run = await fastRun(
      load(`name: nested
steps:
  - id: systems
    forEach: [1, 2]
    as: n
    steps:
      - id: groups
        forEach: "\${{ [n, n * 10] }}"
        as: g
        steps:
          - id: inner
            forEach: [1]
            steps:
              - id: x
                set: { v: "\${{ g }}" }
      - id: report
        set:
          values: "\${{ ($gs := steps.groups.outputs.items; [$gs.steps.inner.outputs.items.steps.x.outputs.v]) }}"
outputs:
  values: \${{ steps.systems.outputs.items.steps.report.outputs.values }}
`),
      { registry },
    );
    expect(run.result.status).toBe('succeeded');
    expect(run.result.outputs).toEqual({ values: [1, 10, 2, 20] });
  });

  it("rebuilds the items' steps from their own entries on resume, from a journal of either shape", async () => {
    const book = load(fleet('${{ steps.systems.outputs.items.steps.report.outputs.row }}'));
    failProbe = true;
    const run = await fastRun(book, { registry });
    expect(run.result.status).toBe('failed');
    const record = await run.store.getRun(run.result.runId);
    if (!record) throw new Error('no run');
    seen = undefined;
    const resumed = await resume(book, run.store, run.result.runId);
    expect(resumed.status).toBe('succeeded');
    expect(resumed.steps.find((line) => line.path === 'systems')).toMatchObject({ replayed: true });
    expect(resumed.outputs).toEqual({ rows: ['a done', 'b done', 'c done'] });
    expect(loopItems()[0]).toEqual({
      index: 0,
      item: 'a',
      status: 'succeeded',
      steps: { report: { status: 'succeeded', outputs: { row: 'a done', size: 2000 } } },
    });

    // The same run journaled as before: the loop's end listing every item with its steps.
    const old = createMemoryRunStore();
    await old.createRun(record);
    for (const event of run.events) {
      const items = event === loopEnd(run.events) ? loopEnd(run.events)?.outputs.items : undefined;
      await old.append(
        record.id,
        items === undefined
          ? event
          : ({
              ...event,
              outputs: {
                ...(event as { outputs: object }).outputs,
                items: items.map((item, index) => ({
                  ...(item as object),
                  steps: { report: { status: 'succeeded', outputs: { row: `old ${index}`, size: 1 } } },
                })),
              },
            } as JournalEvent),
      );
    }
    await old.setRunStatus(record.id, record.status);
    failProbe = false;
    const fromOld = await resume(book, old, record.id);
    expect(fromOld.status).toBe('succeeded');
    expect(fromOld.outputs).toEqual({ rows: ['old 0', 'old 1', 'old 2'] });
  });
});
