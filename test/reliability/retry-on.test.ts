/**
 * The client's own retries of transient failures are turned off for a step only when the
 * step's `retry.on` covers them (`transient` or `any`): otherwise a 429 or a 503 would be
 * retried by neither.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { FIXTURES, startReliabilityHarness, type ReliabilityHarness } from './harness.js';

let harness: ReliabilityHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

it('a 503 under `on: [operationFailed]` is repeated by the client; under `on: [transient]` by the step, not by both', async () => {
  const h = (harness = await startReliabilityHarness({
    simulator: {
      faults: {
        rules: [
          { route: 'privateCloud.listSystems', status: 503, count: 1 },
          { route: 'privateCloud.listSoftwareCatalogs', status: 503, count: 1 },
        ],
      },
    },
  }));
  const result = await h.run(join(FIXTURES, 'retry-on.yaml'));
  expect(result.status).toBe('succeeded');
  const statuses = (operationId: string): number[] =>
    h.sim.control.requests({ operationId }).map((entry) => entry.status);
  expect(statuses('privateCloud.listSystems')).toEqual([503, 200]);
  expect(statuses('privateCloud.listSoftwareCatalogs')).toEqual([503, 200]);

  const clientRetries = h
    .lines()
    .filter((line) => line.msg === 'platform call failed; retrying')
    .map((line) => [line.operationId, line.httpStatus]);
  expect(clientRetries).toEqual([['privateCloud.listSystems', 503]]);
  const journal = await h.store.journal(result.runId);
  const stepRetries = journal.flatMap(({ event }) =>
    event.type === 'retry.scheduled' ? [[event.path, event.attempt, event.reason]] : [],
  );
  expect(stepRetries).toEqual([['catalogs', 2, 'transient']]);
  expect(result.steps.map((step) => [step.path, step.attempts])).toEqual([
    ['systems', 1],
    ['catalogs', 2],
  ]);
});
