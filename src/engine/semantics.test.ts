/**
 * The engine's semantics in virtual time against a fake platform: each case takes a few
 * milliseconds of real time however long its delays and timeouts are. The integration tests
 * in test/engine prove the same against the simulator.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryRunStore, StepStatus, type AppendOptions, type JournalEvent } from '../store/index.js';
import { ApiError } from '../api/index.js';
import { fakeClient, fastRun, noRetry, playbook, step, summary, t, unavailable } from './engine.test-kit.js';

const LIST = 'privateCloud.listSystems';
const transient = (maxAttempts: number) => ({
  ...noRetry,
  maxAttempts,
  initialDelayMs: 10_000,
  on: ['transient' as const],
});
const sleeping = (id: string, duration: number, extra: Record<string, unknown> = {}) =>
  step({ id, kind: 'sleep', duration: t(duration), ...extra });
const failing = (id: string, extra: Record<string, unknown> = {}) =>
  step({ id, kind: 'fail', message: t(`${id} failed`), ...extra });
const setting = (id: string, values: unknown) => step({ id, kind: 'set', values: t(values) });

describe('retries', () => {
  it('retries a transient failure with exponential backoff, journaling each retry, until it succeeds', async () => {
    const client = fakeClient({ [LIST]: [unavailable(LIST), unavailable(LIST), { body: { items: [] } }] });
    const run = await fastRun(
      playbook([step({ id: 'list', kind: 'call', operationId: LIST, with: t({}), retry: transient(3) })]),
      { client },
    );
    expect(run.result.status).toBe('succeeded');
    expect(summary(run, 'list')).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(run.events.filter((event) => event.type === 'retry.scheduled')).toEqual([
      { type: 'retry.scheduled', path: 'list', attempt: 2, delayMs: 10_000, reason: 'transient' },
      { type: 'retry.scheduled', path: 'list', attempt: 3, delayMs: 20_000, reason: 'transient' },
    ]);
    expect(run.result.durationMs).toBe(30_000);
  });

  it("waits the server's hint rather than the backoff", async () => {
    const client = fakeClient({ [LIST]: [unavailable(LIST, 7_000), { body: {} }] });
    const run = await fastRun(
      playbook([step({ id: 'list', kind: 'call', operationId: LIST, with: t({}), retry: transient(2) })]),
      { client },
    );
    expect(run.events.find((event) => event.type === 'retry.scheduled')).toMatchObject({ delayMs: 7_000 });
  });

  it('fails after maxAttempts, and does not retry what `on` does not cover', async () => {
    const spent = await fastRun(
      playbook([step({ id: 'list', kind: 'call', operationId: LIST, with: t({}), retry: transient(2) })]),
      { client: fakeClient({ [LIST]: [unavailable(LIST)] }) },
    );
    expect(summary(spent, 'list')).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'SERVER_ERROR' } });
    const uncovered = await fastRun(playbook([failing('boom', { retry: transient(3) })]));
    expect(summary(uncovered, 'boom')).toMatchObject({ status: 'failed', attempts: 1 });
  });
});

describe('writes of unknown outcome', () => {
  it('are never sent again, not even under retry.on [any]: the step stops with OUTCOME_UNKNOWN', async () => {
    const WRITE = 'privateCloud.runSoftwarePrechecks';
    const dropped = new ApiError('connection lost', 'CONNECTION_FAILED', { operationId: WRITE, retryable: false });
    // The read that would tell whether it was applied fails too: only the operator can tell.
    const unreadable = new ApiError('system unreadable', 'SERVER_ERROR', {
      operationId: 'privateCloud.getSystem',
      status: 500,
      retryable: false,
    });
    const client = fakeClient({ [WRITE]: [{ error: dropped }], 'privateCloud.getSystem': [{ error: unreadable }] });
    const retryAny = { ...noRetry, maxAttempts: 5, on: ['any' as const] };
    const run = await fastRun(
      playbook([
        step({
          id: 'precheck',
          kind: 'call',
          operationId: WRITE,
          with: t({ id: 'sys-1', body: { catalogVersion: '2.4.0' } }),
          retry: retryAny,
        }),
      ]),
      { client },
    );
    expect(summary(run, 'precheck')).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'OUTCOME_UNKNOWN' },
    });
    expect(client.calls.filter((call) => call.operationId === WRITE)).toHaveLength(1);
    expect(run.events.filter((event) => event.type === 'retry.scheduled')).toEqual([]);
  });
});

describe('timeouts', () => {
  it("fails a step that outlasts its timeout with STEP_TIMEOUT, at the timeout's time", async () => {
    const run = await fastRun(playbook([sleeping('nap', 3_600_000, { timeoutMs: 300_000 }), setting('after', 1)]));
    expect(summary(run, 'nap')).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
    expect(summary(run, 'after')?.status).toBe('notStarted');
    expect(run.result.durationMs).toBe(300_000);
  });

  it('bounds a container by its own timeout, not by the default of single steps', async () => {
    const book = playbook(
      [step({ id: 'group', kind: 'block', timeoutMs: 50_000, steps: [sleeping('a', 30_000), sleeping('b', 30_000)] })],
      {
        defaults: { retry: noRetry, wait: {}, timeoutMs: 40_000 },
      },
    );
    const run = await fastRun(book);
    expect(summary(run, 'group')).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
    expect(summary(run, 'group.a')?.status).toBe('succeeded');
    expect(run.result.durationMs).toBe(50_000);
  });
});

describe('rescue, always, continueOnError', () => {
  it('a rescued step succeeds, keeps its error, and its always runs after the rescue', async () => {
    const run = await fastRun(
      playbook([
        failing('boom', { rescue: [setting('fix', 1)], always: [setting('report', '${{ steps.boom.status }}')] }),
      ]),
    );
    expect(run.result.status).toBe('succeeded');
    expect(summary(run, 'boom')).toMatchObject({
      status: 'succeeded',
      rescued: true,
      error: { message: 'boom failed' },
    });
    expect(run.result.steps.map((line) => line.path)).toEqual(['boom', 'boom.fix', 'boom.report']);
  });

  it('a failing always fails a step that had succeeded (ALWAYS_FAILED)', async () => {
    const run = await fastRun(
      playbook([setting('fine', 1), { ...setting('wrapped', 2), always: [failing('cleanup')] }]),
    );
    expect(summary(run, 'wrapped')).toMatchObject({ status: 'failed', error: { code: 'ALWAYS_FAILED' } });
    expect(run.result.status).toBe('failed');
  });

  it('continueOnError keeps the step failed and goes on; without it the rest is notStarted', async () => {
    const continued = await fastRun(playbook([failing('soft', { continueOnError: true }), setting('next', 1)]));
    expect(continued.result.steps.map((line) => [line.path, line.status])).toEqual([
      ['soft', 'failed'],
      ['next', 'succeeded'],
    ]);
    const stopped = await fastRun(playbook([failing('hard'), setting('next', 1)]));
    expect(summary(stopped, 'next')?.status).toBe('notStarted');
  });
});

describe('forEach', () => {
  const loop = (extra: Record<string, unknown>, steps = [sleeping('work', 1_000)]) =>
    step({
      id: 'each',
      kind: 'forEach',
      items: t([0, 1, 2, 3, 4, 5, 6, 7]),
      as: 'n',
      concurrency: t(8),
      steps,
      ...extra,
    });

  it('starts a batch only once the previous one has finished', async () => {
    const run = await fastRun(playbook([loop({ batches: [1, '25%', '100%'] })]));
    const order = run.events
      .filter((event) => event.type === 'item.started' || event.type === 'item.finished')
      .map((event) => `${event.type === 'item.started' ? '+' : '-'}${'index' in event ? event.index : ''}`);
    expect(order).toEqual([
      '+0',
      '-0',
      '+1',
      '+2',
      '-1',
      '-2',
      '+3',
      '+4',
      '+5',
      '+6',
      '+7',
      '-3',
      '-4',
      '-5',
      '-6',
      '-7',
    ]);
    // Three batches of one second each, whatever their size.
    expect(run.result.durationMs).toBe(3_000);
  });

  it('caps the items in flight at concurrency', async () => {
    const run = await fastRun(playbook([loop({ concurrency: t(3) })]));
    expect(run.result.durationMs).toBe(3_000);
  });

  it("fails the loop with the store's error when an item's entry cannot be written, waiting for no other item", async () => {
    const store = createMemoryRunStore();
    const append = store.append.bind(store);
    store.append = (runId: string, event: JournalEvent, options?: AppendOptions) =>
      event.type === 'item.finished' && event.index === 1
        ? Promise.reject(new Error('the disk is full'))
        : append(runId, event, options);
    // Item 1 ends first (no sleep); items 0 and 2 sleep a minute, item 3 never starts.
    const work = step({ id: 'work', kind: 'sleep', duration: t('${{ n = 1 ? 0 : 60000 }}') });
    const run = await fastRun(playbook([loop({ items: t([0, 1, 2, 3]), concurrency: t(3) }, [work])]), { store });
    expect(run.result.status).toBe('failed');
    expect(summary(run, 'each')?.error?.message).toContain('the disk is full');
    expect(summary(run, 'each[3].work')).toBeUndefined();
    expect(run.result.durationMs).toBe(0);
  });

  const failOdd = [step({ id: 'check', kind: 'assert', condition: t('${{ n % 2 = 0 }}') })];

  it('succeeds when failures reach the tolerance, and fails once they exceed it', async () => {
    const items = (count: number) => t(Array.from({ length: count }, (_, index) => index));
    const reached = await fastRun(
      playbook([loop({ items: items(4), concurrency: t(1), tolerate: { failures: t(2) } }, failOdd)]),
    );
    expect(summary(reached, 'each')).toMatchObject({ status: 'succeeded' });
    const exceeded = await fastRun(
      playbook([loop({ items: items(8), concurrency: t(1), tolerate: { failures: t(1) } }, failOdd)]),
    );
    expect(summary(exceeded, 'each')).toMatchObject({
      status: 'failed',
      error: { code: 'TOLERANCE_EXCEEDED', message: '2 of 8 items failed (tolerated: 1); 4 never started' },
    });
    expect(
      exceeded.result.steps
        .filter((line) => line.kind === 'item' && line.status === StepStatus.notStarted)
        .map((line) => line.path),
    ).toEqual(['each[4]', 'each[5]', 'each[6]', 'each[7]']);
  });
});

describe('parallel and uses', () => {
  it('runs branches at once and fails when one fails, after all have ended', async () => {
    const branches = [[sleeping('slow', 10_000)], [sleeping('quick', 2_000), failing('boom')]];
    const run = await fastRun(playbook([step({ id: 'both', kind: 'parallel', branches })]));
    expect(summary(run, 'both')).toMatchObject({ status: 'failed', error: { message: '1 of 2 branches failed' } });
    expect(summary(run, 'both.slow')?.status).toBe('succeeded');
    expect(run.result.durationMs).toBe(10_000);
  });

  it("runs a used playbook with its inputs, its outputs the step's", async () => {
    const child = playbook([setting('double', { value: '${{ inputs.n * 2 }}' })], {
      name: 'child',
      inputs: { n: { type: 'integer', secret: false, required: true, schema: { type: 'integer' } } },
      outputs: t({ result: '${{ steps.double.outputs.value }}' }),
    });
    const run = await fastRun(
      playbook([step({ id: 'sub', kind: 'uses', playbookRef: 'child', with: t({ n: 21 }), playbook: child })], {
        outputs: t('${{ steps.sub.outputs.result }}'),
      }),
    );
    expect(run.result).toMatchObject({ status: 'succeeded', outputs: 42 });
    expect(run.events.find((event) => event.type === 'step.started' && event.path === 'sub')).toMatchObject({
      input: { playbook: 'child', inputs: { n: 21 } },
    });
  });
});

describe('cancellation', () => {
  it('interrupts the steps in flight and starts nothing more', async () => {
    const controller = new AbortController();
    const first = fastRun(playbook([sleeping('nap', 3_600_000), setting('after', 1)]), { signal: controller.signal });
    setImmediate(() => controller.abort());
    const run = await first;
    expect(run.result.status).toBe('interrupted');
    expect(run.result.steps.map((line) => [line.path, line.status])).toEqual([
      ['nap', 'interrupted'],
      ['after', 'notStarted'],
    ]);
    expect(run.clock.pending()).toBe(0);
  });
});
