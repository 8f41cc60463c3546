import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { createVirtualClock, type Clock } from '../../src/timers/index.js';
import { input, noRetry, playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  harness = await startHarness(options);
  return harness;
}

const catalogStep = step({
  id: 'catalog',
  kind: 'call',
  operationId: 'privateCloud.listSoftwareCatalogs',
  with: t({ filter: "version eq '2.4.0'" }),
});
const firstSystem = '${{ steps.catalog.outputs.body.items[0].systemsWithUpdatePath[0].id }}';
const precheckStep = (extra: Record<string, unknown> = {}) =>
  step({
    id: 'precheck',
    kind: 'call',
    operationId: 'privateCloud.runSoftwarePrechecks',
    with: t({ id: firstSystem, body: { catalogVersion: '2.4.0' } }),
    wait: {},
    ...extra,
  });

/** Most requests in flight at once, from the simulator's request log. */
function maxInFlight(entries: readonly RequestLogEntry[]): number {
  const edges = entries.flatMap((entry) => {
    const start = Date.parse(entry.time);
    return [
      { at: start, delta: 1 },
      { at: start + entry.durationMs, delta: -1 },
    ];
  });
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (current += edge.delta));
  return most;
}

describe('call steps against the simulator', () => {
  it('retries a read that fails twice and succeeds on the third attempt, the client not retrying on its own', async () => {
    const h = await start({ faults: { rules: [{ route: 'privateCloud.listSystems', status: 408, count: 2 }] } });
    const result = await h.run(
      playbook([
        step({
          id: 'systems',
          kind: 'call',
          operationId: 'privateCloud.listSystems',
          with: t({}),
          retry: { ...noRetry, maxAttempts: 3, on: ['transient'] },
        }),
      ]),
    );
    expect(result.status).toBe('succeeded');
    expect(result.steps).toMatchObject([{ path: 'systems', status: 'succeeded', attempts: 3 }]);
    expect(h.sim.control.requests({ operationId: 'privateCloud.listSystems' }).map((entry) => entry.status)).toEqual([
      408, 408, 200,
    ]);
    const journal = (await h.store.journal(result.runId)).map((entry) => entry.event.type);
    expect(journal.filter((type) => type === 'retry.scheduled')).toHaveLength(2);
    const attempts = h.lines().filter((line) => line.stepId === 'systems' && line.httpStatus === 200);
    expect(attempts.at(-1)).toMatchObject({
      attempt: 3,
      operationId: 'privateCloud.listSystems',
      runId: result.runId,
      playbook: 'test-playbook',
    });
  });

  it('fails a wait that does not end in time, with a timeout the retry policy can name', async () => {
    const h = await start({ faults: { asyncOperations: [{ type: 'software-prechecks', outcome: 'never' }] } });
    const result = await h.run(
      playbook([catalogStep, precheckStep({ wait: { timeoutMs: 300, minPollMs: 10, maxPollMs: 20 } })]),
    );
    expect(result.status).toBe('failed');
    expect(result.steps.find((s) => s.stepId === 'precheck')).toMatchObject({
      status: 'failed',
      error: { code: 'WAIT_TIMEOUT' },
    });
    const journal = (await h.store.journal(result.runId)).map((entry) => entry.event);
    expect(journal.find((event) => event.type === 'request.answered' && event.path === 'precheck')).toMatchObject({
      httpStatus: 202,
      location: expect.stringMatching(/async-operations/),
    });
    expect(journal.find((event) => event.type === 'operation.finished')).toMatchObject({ outcome: 'timedOut' });
  });

  it("journals a write's small answer body with the answer, and no read's", async () => {
    const h = await start();
    const add = step({
      id: 'add',
      kind: 'call',
      operationId: 'subscriptions.addSubscriptions',
      with: t({ body: { subscriptions: [{ key: 'KEYJOURNALED01' }] } }),
    });
    const read = step({ id: 'read', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) });
    const result = await h.run(playbook([add, read]));
    expect(result.status).toBe('succeeded');
    const answers = (await h.store.journal(result.runId))
      .map((entry) => entry.event)
      .filter((event) => event.type === 'request.answered');
    expect(answers.find((event) => event.path === 'add')).toMatchObject({
      httpStatus: 202,
      body: { code: 202, status: '202 ACCEPTED', transactionId: expect.any(String) },
    });
    expect(answers.find((event) => event.path === 'read')).not.toHaveProperty('body');
  });

  it('does not send an accepted write again when following its operation breaks', async () => {
    const h = await start({
      faults: { rules: [{ route: 'dataServices.getAsyncOperation', status: 408, count: 100 }] },
    });
    const result = await h.run(
      playbook([catalogStep, precheckStep({ retry: { ...noRetry, maxAttempts: 3, on: ['transient'] } })]),
    );
    expect(result.steps.find((s) => s.stepId === 'precheck')).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'WAIT_FAILED' },
    });
    expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwarePrechecks' })).toHaveLength(1);
  });

  it('runs rescue when the async operation fails, and the step counts as recovered', async () => {
    const h = await start();
    const update = step({
      id: 'update',
      kind: 'call',
      operationId: 'privateCloud.runSoftwareUpdate',
      with: t({ id: firstSystem, body: { catalogVersion: '2.4.0' } }),
      wait: {},
      rescue: [
        step({
          id: 'resume',
          kind: 'call',
          operationId: 'privateCloud.resumeSoftwareUpdate',
          with: t({ id: firstSystem }),
          wait: {},
        }),
      ],
    });
    const after = step({
      id: 'after',
      kind: 'call',
      operationId: 'privateCloud.getSystem',
      with: t({ id: firstSystem }),
    });
    const result = await h.run(
      playbook([catalogStep, precheckStep(), update, after], {
        outputs: t({
          state: '${{ steps.after.outputs.body.softwareInfo.currentUpdateStatus.state }}',
          failedWith: '${{ steps.update.error.code }}',
        }),
      }),
    );
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ state: 'UPDATE_COMPLETE', failedWith: 'OPERATION_FAILED' });
    expect(result.steps.map((s) => [s.path, s.status])).toEqual([
      ['catalog', 'succeeded'],
      ['precheck', 'succeeded'],
      ['update', 'succeeded'],
      ['update.resume', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    expect(result.steps.find((s) => s.path === 'update')).toMatchObject({
      rescued: true,
      error: { code: 'OPERATION_FAILED' },
    });
  });

  it('sends no write in a dry run, performs the reads, and says which steps were simulated', async () => {
    const h = await start();
    const result = await h.run(playbook([catalogStep, precheckStep()]), { dryRun: true });
    expect(result.status).toBe('succeeded');
    expect(result.simulatedSteps).toEqual(['precheck']);
    expect(
      h.sim.control.requests().filter((entry) => entry.method !== 'GET' && !entry.operationId.startsWith('auth.')),
    ).toEqual([]);
    expect(h.sim.control.requests({ operationId: 'privateCloud.listSoftwareCatalogs' })).toHaveLength(1);
    const line = h.lines().find((entry) => entry.dryRun === true && entry.stepId === 'precheck');
    expect(line?.request).toMatchObject({
      method: 'POST',
      url: expect.stringContaining('/software-prechecks'),
      body: { catalogVersion: '2.4.0' },
    });
  });
});

describe('control flow', () => {
  it('runs always after a failure, and reports the steps that never started', async () => {
    const h = await start();
    const result = await h.run(
      playbook([
        step({
          id: 'boom',
          kind: 'fail',
          message: t('stop here'),
          always: [step({ id: 'cleanup', kind: 'set', values: t({ done: true }) })],
        }),
        step({ id: 'never', kind: 'log', message: t('unreachable'), level: 'info' }),
      ]),
    );
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ message: 'stop here', code: 'FAILED_BY_PLAYBOOK' });
    expect(result.steps.map((s) => [s.path, s.status])).toEqual([
      ['boom', 'failed'],
      ['boom.cleanup', 'succeeded'],
      ['never', 'notStarted'],
    ]);
  });

  it('skips a step whose if is false and continues past a failure marked continueOnError', async () => {
    const h = await start();
    const result = await h.run(
      playbook([
        step({ id: 'skipped', kind: 'fail', message: t('no'), if: t('${{ 1 = 2 }}') }),
        step({ id: 'tolerated', kind: 'assert', condition: t('${{ false }}'), continueOnError: true }),
        step({ id: 'last', kind: 'set', values: t({ seen: '${{ steps.tolerated.status }}' }) }),
      ]),
    );
    expect(result.status).toBe('succeeded');
    expect(result.steps.map((s) => s.status)).toEqual(['skipped', 'failed', 'succeeded']);
  });

  it('runs a sub-playbook with rendered inputs and takes its outputs', async () => {
    const h = await start();
    const child = playbook(
      [step({ id: 'shout', kind: 'set', values: t({ text: '${{ $uppercase(inputs.name) }}' }) })],
      {
        name: 'child',
        inputs: { name: input('string') },
        outputs: t({ greeting: 'hello ${{ steps.shout.outputs.text }}' }),
      },
    );
    const result = await h.run(
      playbook(
        [
          step({
            id: 'greet',
            kind: 'uses',
            playbookRef: './child.yaml',
            playbook: child,
            with: t({ name: '${{ inputs.who }}' }),
          }),
          step({ id: 'use', kind: 'set', values: t({ said: '${{ steps.greet.outputs.greeting }}' }) }),
        ],
        { inputs: { who: input('string') }, outputs: t('${{ steps.use.outputs.said }}') },
      ),
      { inputs: { who: 'ops' } },
    );
    expect(result).toMatchObject({ status: 'succeeded', outputs: 'hello OPS' });
    expect(result.steps.map((s) => s.path)).toEqual(['greet', 'greet.shout', 'use']);
  });

  it('names a missing or ill-typed input before anything runs', async () => {
    const h = await start();
    const book = playbook([], {
      inputs: { count: input('integer'), name: input('string', { default: 'x', required: false }) },
    });
    await expect(h.run(book)).rejects.toMatchObject({
      code: 'INVALID_INPUTS',
      exitCode: 2,
      message: expect.stringContaining("input 'count' (integer) is required"),
    });
    await expect(h.run(book, { inputs: { count: 'three' } })).rejects.toThrow(/input 'count' must be integer/);
    expect(await h.store.listRuns()).toEqual([]);
  });

  it('stops a sleeping run on abort: interrupted, and quickly', async () => {
    const h = await start();
    const controller = new AbortController();
    // Aborted the moment the hour's sleep begins (its timer armed), in virtual time: no wall time passes.
    const virtual = createVirtualClock(0);
    const clock: Clock = {
      now: virtual.now,
      setTimer(callback, delayMs) {
        const timer = virtual.setTimer(callback, delayMs);
        if (delayMs === 3_600_000) queueMicrotask(() => controller.abort());
        return timer;
      },
    };
    const result = await h.run(
      playbook([
        step({ id: 'nap', kind: 'sleep', duration: t('1h') }),
        step({ id: 'next', kind: 'log', message: t('x'), level: 'info' }),
      ]),
      { signal: controller.signal, clock },
    );
    // Stopped at once, not at the hour's end.
    expect(virtual.now()).toBeLessThan(3_600_000);
    expect(result.status).toBe('interrupted');
    expect(result.steps.map((s) => [s.path, s.status])).toEqual([
      ['nap', 'interrupted'],
      ['next', 'notStarted'],
    ]);
    expect((await h.store.getRun(result.runId))?.status).toBe('interrupted');
  });

  it('fails a step that outlives its timeout', async () => {
    const h = await start();
    const result = await h.run(
      playbook([
        step({ id: 'nap', kind: 'sleep', duration: t('10s'), timeoutMs: 50, continueOnError: true }),
        // The timeout bounds the step with its retries and their delays.
        step({
          id: 'retrying',
          kind: 'assert',
          condition: t(false),
          timeoutMs: 200,
          retry: { ...noRetry, maxAttempts: 1000, initialDelayMs: 50, maxDelayMs: 50, jitter: 'none', on: ['any'] },
        }),
      ]),
    );
    expect(result.steps[0]).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
    expect(result.steps[1]).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
    expect(result.steps[1]?.attempts).toBeGreaterThan(1);
    expect(result.steps[1]?.attempts).toBeLessThan(10);
  });
});

describe('forEach', () => {
  const items = (count: number) => t(`\${{ [1..${count}] }}`);

  it('never runs more items at once than its concurrency (the request log proves it)', async () => {
    const h = await start({ faults: { rules: [{ route: 'privateCloud.listSystems', latencyMs: 60 }] } });
    const result = await h.run(
      playbook([
        step({
          id: 'each',
          kind: 'forEach',
          items: items(9),
          as: 'n',
          concurrency: t(3),
          steps: [
            step({
              id: 'read',
              kind: 'call',
              operationId: 'privateCloud.listSystems',
              with: t({ offset: '${{ n }}' }),
            }),
          ],
        }),
      ]),
    );
    expect(result.status).toBe('succeeded');
    const requests = h.sim.control.requests({ operationId: 'privateCloud.listSystems' });
    expect(requests).toHaveLength(9);
    expect(maxInFlight(requests)).toBe(3);
    expect(result.steps.filter((s) => s.kind === 'item')).toHaveLength(9);
  });

  it('starts a batch only when the previous one has finished', async () => {
    const h = await start();
    const result = await h.run(
      playbook([
        step({
          id: 'each',
          kind: 'forEach',
          items: items(6),
          as: 'n',
          concurrency: t(10),
          batches: [1, '50%'],
          steps: [step({ id: 'nap', kind: 'sleep', duration: t('${{ 10 + (7 - n) * 5 }}') })],
        }),
      ]),
    );
    expect(result.status).toBe('succeeded');
    const journal = (await h.store.journal(result.runId)).map((entry) => entry.event);
    const order = journal.flatMap((event) =>
      event.type === 'item.started' ? [`+${event.index}`] : event.type === 'item.finished' ? [`-${event.index}`] : [],
    );
    // Batches of 1, 3 and 2 items: every item of a batch ends before the next batch starts.
    const position = (mark: string) => order.indexOf(mark);
    expect(Math.max(position('-0'))).toBeLessThan(Math.min(position('+1'), position('+2'), position('+3')));
    expect(Math.max(position('-1'), position('-2'), position('-3'))).toBeLessThan(
      Math.min(position('+4'), position('+5')),
    );
    expect(journal.find((event) => event.type === 'step.started' && event.path === 'each')).toMatchObject({
      input: { batches: [1, 3, 2] },
    });
  });

  const failingLoop = (tolerate: unknown) =>
    playbook([
      step({
        id: 'each',
        kind: 'forEach',
        items: items(5),
        as: 'n',
        concurrency: t(1),
        tolerate: { failures: t(tolerate) },
        steps: [
          step({
            id: 'check',
            kind: 'assert',
            condition: t('${{ n != 2 and n != 4 }}'),
            message: t('item ${{ n }} is bad'),
          }),
        ],
      }),
    ]);

  it('succeeds when failures reach the tolerance', async () => {
    const h = await start();
    const result = await h.run(failingLoop(2));
    expect(result.status).toBe('succeeded');
    const each = (await h.store.journal(result.runId))
      .map((entry) => entry.event)
      .find((event) => event.type === 'step.finished' && event.path === 'each');
    expect(each).toMatchObject({ status: 'succeeded', outputs: { succeeded: 3, failed: 2, notStarted: 0 } });
  });

  it('stops starting items once failures exceed the tolerance, and reports the rest as never started', async () => {
    const h = await start();
    const result = await h.run(failingLoop('20%'));
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TOLERANCE_EXCEEDED' });
    expect(result.steps.filter((s) => s.kind === 'item').map((s) => [s.path, s.status])).toEqual([
      ['each[0]', 'succeeded'],
      ['each[1]', 'failed'],
      ['each[2]', 'succeeded'],
      ['each[3]', 'failed'],
      ['each[4]', 'notStarted'],
    ]);
  });
});

describe('http steps and secrets', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function webhook(): Promise<{
    url: string;
    received: Array<{ headers: IncomingMessage['headers']; body: string }>;
  }> {
    const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response
          .writeHead(received.length === 1 ? 503 : 200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ok: received.length > 1 }));
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
    return { url: `http://127.0.0.1:${(server?.address() as AddressInfo).port}/hook`, received };
  }

  it('posts a webhook, retries its 503, and never writes a secret to a log line or the journal', async () => {
    const h = await start();
    const hook = await webhook();
    const secret = 'hook-token-3f9a1c77';
    const book = playbook(
      [
        step({ id: 'systems', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) }),
        step({ id: 'say', kind: 'log', message: t('token is ${{ inputs.token }}'), level: 'info' }),
        step({
          id: 'notify',
          kind: 'http',
          request: t({
            url: hook.url,
            headers: { authorization: 'Bearer ${{ inputs.token }}' },
            body: { text: 'done with ${{ inputs.token }}', systems: '${{ steps.systems.outputs.body.total }}' },
          }),
          retry: { ...noRetry, maxAttempts: 2, on: ['transient'] },
        }),
      ],
      {
        inputs: {
          token: input('string', { secret: true }),
          url: input('string', { default: hook.url, required: false }),
        },
      },
    );
    const result = await h.run(book, { inputs: { token: secret } });
    expect(result.status).toBe('succeeded');
    expect(result.steps.find((s) => s.stepId === 'notify')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]?.headers.authorization).toBe(`Bearer ${secret}`);
    expect(JSON.parse(hook.received[1]?.body ?? '{}')).toMatchObject({ text: `done with ${secret}` });

    const lines = h.text();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).not.toContain(secret);
    expect(lines).not.toContain('sim-admin-secret');
    expect(lines).not.toMatch(/Bearer [A-Za-z0-9._-]{12,}/);
    expect(lines).toContain('token is [REDACTED]');
    const journal = JSON.stringify(await h.store.journal(result.runId));
    expect(journal).not.toContain(secret);
    const run = await h.store.getRun(result.runId);
    expect(run).toMatchObject({ secretInputNames: ['token'] });
    expect(JSON.stringify(run)).not.toContain(secret);
  });
});
