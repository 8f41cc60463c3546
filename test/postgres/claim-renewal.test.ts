// A worker renews its claim until it is done with the run: a renewal answered after the run's end
// was written is not a take-over. It was logged as one ("this worker's claim was taken over")
// just before the run's success, in about 2 runs of 7: whenever a renewal fell between the end
// and the worker letting go (its notifications are sent in between).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enqueuePlaybookRun } from '../../src/engine/index.js';
import { fakeClient, playbook, step, t } from '../../src/engine/engine.test-kit.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import { runWorker } from '../../src/scheduler/index.js';
import { createPostgresRunStore, type QueueStore } from '../../src/store/index.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();
const book = playbook([step({ id: 'only', kind: 'set', values: t({ done: true }) })]);

describe.skipIf(!adminUrl)('a worker’s claim of its own run', () => {
  let store: QueueStore;
  beforeEach(async () => {
    store = await createPostgresRunStore({ url: await createTestDatabase(adminUrl ?? '') });
  });
  afterEach(async () => {
    await store.close();
  });

  it('is not reported taken over when a renewal comes after the run ended', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => lines.push(JSON.parse(line)) },
    });
    // The store's answers to the worker's renewals, in order, each told to whoever waits for the next.
    const renewals: boolean[] = [];
    let renewed: (() => void) | undefined;
    const watched: QueueStore = Object.create(store) as QueueStore;
    watched.renewClaim = async (...args) => {
      const held = await store.renewClaim(...args);
      renewals.push(held);
      renewed?.();
      return held;
    };
    const run = await enqueuePlaybookRun(book, { store });
    const secrets = createSecretRegistry();
    let renewalsBeforeEnd = -1;
    const summary = await runWorker({
      store: watched,
      client: fakeClient({}),
      logger,
      secrets,
      loadPlaybook: () => book,
      secretInputsOf: () => ({}),
      exitWhenIdle: true,
      pollMs: 10,
      claimTtlMs: 1500,
      notifications: {
        hookFor: () => () => [],
        // Called once the run's end is written and before the worker lets go of the claim (its
        // sends take time): the next renewal of the claim falls here.
        deliver: async () => {
          renewalsBeforeEnd = renewals.length;
          await new Promise<void>((resolve) => (renewed = resolve));
          return { sent: 0, failed: 0, skipped: 0 };
        },
      } as unknown as NonNullable<Parameters<typeof runWorker>[0]['notifications']>,
    });
    expect(summary.finished).toBe(1);
    expect((await store.getRun(run.id))?.status).toBe('succeeded');
    expect(renewals.length).toBeGreaterThan(renewalsBeforeEnd);
    expect(lines.filter((line) => line.event === 'claim.lost')).toEqual([]);
    expect(renewals.slice(renewalsBeforeEnd)).toEqual([true]);
  });
});
