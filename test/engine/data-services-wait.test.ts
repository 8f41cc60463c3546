/**
 * A data-services record has no `timeoutMinutes` (as published): a wait on an operation that
 * never ends is bounded by the step's own deadline, its `wait.timeout` or its `timeout`.
 */
import { afterEach, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const refresh = (extra: Record<string, unknown>) =>
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
      ...extra,
    }),
  ]);

it.each([
  ['wait.timeout', { wait: { timeoutMs: 300, minPollMs: 5, maxPollMs: 20 } }, 'WAIT_TIMEOUT'],
  ['the step timeout', { wait: { minPollMs: 5, maxPollMs: 20 }, timeoutMs: 300 }, 'STEP_TIMEOUT'],
])('ends a wait on a data-services operation that never ends at %s', async (_name, extra, code) => {
  const h = (harness = await startHarness({
    faults: { asyncOperations: [{ type: 'software-version-refresh', outcome: 'never' }] },
  }));
  const startedAt = Date.now();
  const result = await h.run(refresh(extra));
  expect(result.status).toBe('failed');
  expect(Date.now() - startedAt).toBeLessThan(10_000);
  const failed = result.steps.find((entry) => entry.path === 'refresh');
  expect(failed).toMatchObject({ status: 'failed', error: { code } });
  // It was polled (more than once) and had no timeoutMinutes to bound the wait by.
  expect(h.sim.control.requests({ operationId: 'dataServices.getAsyncOperation' }).length).toBeGreaterThan(1);
});
