import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The warnings Node emits while `task` runs. */
async function warningsDuring<T>(task: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  try {
    const result = await task();
    // Node emits warnings on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    return { result, warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

describe("the run's abort signals", () => {
  it('take a forEach of concurrency 30 under a timed container without a MaxListenersExceededWarning', async () => {
    harness = await startHarness();
    const h = harness;
    const loop = step({
      id: 'each',
      kind: 'forEach',
      items: t('${{ [1..60] }}'),
      as: 'n',
      concurrency: t(30),
      steps: [
        step({ id: 'nap', kind: 'sleep', duration: t('20ms') }),
        step({ id: 'systems', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) }),
      ],
    });
    const { result, warnings } = await warningsDuring(() =>
      h.run(playbook([step({ id: 'timed', kind: 'block', timeoutMs: 60_000, steps: [loop] })])),
    );
    expect(result.status).toBe('succeeded');
    expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });

  it('keep no listener per step: 200 sequential steps leave the count bounded, and none once the run ends', async () => {
    harness = await startHarness();
    const controller = new AbortController();
    const counts: number[] = [];
    const sampler = setInterval(() => counts.push(getEventListeners(controller.signal, 'abort').length), 1);
    const steps = Array.from({ length: 100 }, (_, index) => [
      step({ id: `nap${index}`, kind: 'sleep', duration: t('5ms') }),
      step({ id: `read${index}`, kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) }),
    ]).flat();
    const result = await harness.run(playbook(steps), { signal: controller.signal });
    clearInterval(sampler);
    expect(result.status).toBe('succeeded');
    expect(result.steps).toHaveLength(200);
    expect(counts.length).toBeGreaterThan(10);
    // The probe sees the listeners of the steps in flight (it can fail), and they do not pile up.
    expect(Math.max(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThanOrEqual(3);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
