import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/index.js';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('step log lines at info', () => {
  it('keeps the started/finished lines of calls and failures, not those of set steps, and a log step says its message', async () => {
    const h = (harness = await startHarness());
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ destination, level: 'info', secrets: h.secrets });
    const result = await h.run(
      playbook([
        step({ id: 'compute', kind: 'set', values: t({ answer: 42 }) }),
        step({ id: 'catalog', kind: 'call', operationId: 'privateCloud.listSoftwareCatalogs', with: t({}) }),
        step({ id: 'say', kind: 'log', message: t('answer is ${{ steps.compute.outputs.answer }}'), level: 'info' }),
        step({ id: 'check', kind: 'assert', condition: t(false), continueOnError: true }),
      ]),
      { logger },
    );
    expect(result.status).toBe('succeeded');
    const messages = lines.map((line) => line.msg);
    expect(messages).toContain('step catalog started');
    expect(messages).toContain('step catalog succeeded');
    expect(messages).toContain('answer is 42');
    expect(lines.find((line) => line.msg === 'step check failed')).toMatchObject({ level: 50, stepId: 'check' });
    expect(messages.filter((msg) => typeof msg === 'string' && /^step (compute|say) /.test(msg))).toEqual([]);
  });
});

describe("a waiting call's log lines", () => {
  it('carry the run, the step, its path in the loop, the attempt and the operation, with no logger made for the step', async () => {
    const h = (harness = await startHarness());
    const texts: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        texts.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const logger = createLogger({ destination, level: 'info', secrets: h.secrets });
    // pino calls `onChild` (inherited by every child) for each child logger made under this one.
    const madeFor: unknown[] = [];
    logger.onChild = (child) => madeFor.push(child.bindings().stepId);
    const precheck = step({
      id: 'precheck',
      kind: 'call',
      operationId: 'privateCloud.runSoftwarePrechecks',
      with: t({
        id: '${{ $$.steps.catalog.outputs.body.items[0].systemsWithUpdatePath[0].id }}',
        body: { catalogVersion: '2.4.0' },
      }),
      wait: {},
    });
    const result = await h.run(
      playbook([
        step({
          id: 'catalog',
          kind: 'call',
          operationId: 'privateCloud.listSoftwareCatalogs',
          with: t({ filter: "version eq '2.4.0'" }),
        }),
        step({ id: 'each', kind: 'forEach', items: t('${{ [1] }}'), as: 'n', concurrency: t(1), steps: [precheck] }),
      ]),
      { logger },
    );
    expect(result.status).toBe('succeeded');
    const lines = texts
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((line) => line.stepId === 'precheck');
    const ofStep = { runId: result.runId, playbook: 'test-playbook', stepId: 'precheck', path: 'each[0].precheck' };
    const ofAttempt = { ...ofStep, attempt: 1, operationId: 'privateCloud.runSoftwarePrechecks' };
    expect(lines.find((line) => typeof line.msg === 'string' && line.msg.endsWith(' started'))).toMatchObject({
      ...ofStep,
      kind: 'call',
    });
    expect(lines.find((line) => line.httpStatus === 202)).toMatchObject(ofAttempt);
    expect(lines.find((line) => line.progressPercent === 100)).toMatchObject(ofAttempt);
    expect(lines.find((line) => line.outcome === 'succeeded')).toMatchObject({
      ...ofAttempt,
      polls: expect.any(Number),
    });
    const finished = lines.find((line) => line.status === 'succeeded');
    expect(finished).toMatchObject({ ...ofStep, kind: 'call', attempts: 1 });
    expect(finished).not.toHaveProperty('attempt');
    // Each field once per line: a binding and a field of the same name would both be written.
    expect(texts.filter((text) => (text.match(/"stepId"/g) ?? []).length > 1)).toEqual([]);
    // No logger made for the step: its lines are the run logger's with its fields, and a wait
    // would hold a logger of its own for as long as it lasts.
    expect(madeFor.filter((stepId) => stepId === 'precheck')).toEqual([]);
  });
});
