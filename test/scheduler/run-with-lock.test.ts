import { describe, expect, it } from 'vitest';
import { captureLogs } from '../../src/api/testing.js';
import { createPlatformClient } from '../../src/api/index.js';
import { runPlaybookWithLock } from '../../src/scheduler/run-with-lock.js';
import { isSchedulerError } from '../../src/scheduler/scheduler-error.js';
import { createMemoryRunStore, RunStatus } from '../../src/store/index.js';
import { input, playbook, step, t } from '../engine/harness.js';
import { watchLeases } from '../support/lease-events.js';

// The steps only sleep: the client is never called.
const client = createPlatformClient({
  credentials: { clientId: 'unused', clientSecret: 'unused-secret' },
  authUrl: 'http://127.0.0.1:9/token',
  baseUrl: 'http://127.0.0.1:9',
  regionalUrl: 'http://127.0.0.1:9',
});
const locked = playbook([step({ id: 'work', kind: 'sleep', duration: t('300ms') })], {
  name: 'maintenance',
  inputs: { systemId: input('string') },
  lock: t('system-${{ inputs.systemId }}'),
});

describe('playbook lock', () => {
  it('a manual run is refused while another run holds the same key; other keys run at once', async () => {
    const { store, taken } = watchLeases(createMemoryRunStore());
    const { logger } = captureLogs();
    const first = runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger });
    await taken('lock:system-a');
    let caught: unknown;
    try {
      await runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger });
    } catch (error) {
      caught = error;
    }
    expect(isSchedulerError(caught) && caught.code).toBe('LOCK_HELD');
    expect(String((caught as Error).message)).toContain("holds lock 'system-a'");
    const other = await runPlaybookWithLock(locked, { inputs: { systemId: 'b' }, client, store, logger });
    expect(other.status).toBe(RunStatus.succeeded);
    expect((await first).status).toBe(RunStatus.succeeded);
    // Released at the end: the key is free again.
    expect((await runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger })).status).toBe(
      RunStatus.succeeded,
    );
  });

  it('a scheduled run waits for the key and starts after the manual run ended', async () => {
    const { store, taken } = watchLeases(createMemoryRunStore());
    const logs = captureLogs();
    const manual = runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger: logs.logger });
    await taken('lock:system-a');
    const scheduled = await runPlaybookWithLock(locked, {
      inputs: { systemId: 'a' },
      client,
      store,
      logger: logs.logger,
      waitForLock: true,
      lockPollMs: 20,
      trigger: { kind: 'schedule', scheduleId: 'maintenance#0' },
    });
    const first = await manual;
    expect(scheduled.status).toBe(RunStatus.succeeded);
    const [manualRun, scheduledRun] = await Promise.all([store.getRun(first.runId), store.getRun(scheduled.runId)]);
    expect(Date.parse(scheduledRun?.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(manualRun?.endedAt ?? 'x'));
    expect(logs.lines().filter((line) => line.event === 'lock.waiting')).toEqual([
      expect.objectContaining({ lock: 'system-a', runId: scheduled.runId, heldBy: first.runId }),
    ]);
  });

  it('a dry run takes no lock', async () => {
    const { store, taken } = watchLeases(createMemoryRunStore());
    const { logger } = captureLogs();
    const manual = runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger });
    await taken('lock:system-a');
    expect(
      (await runPlaybookWithLock(locked, { inputs: { systemId: 'a' }, client, store, logger, dryRun: true })).status,
    ).toBe(RunStatus.succeeded);
    await manual;
  });
});
