/**
 * A message tells the run's whole duration, from its first start to its end, as `runs show`
 * does: a run that waited at an approval gate and was resumed by another process is not told
 * only the part after the approval. In virtual time, against the fake platform.
 */
import { describe, expect, it } from 'vitest';
import { fakeClient, fastRun, playbook, step, t } from '../../src/engine/engine.test-kit.js';
import { recordApproval, resumeRun } from '../../src/engine/index.js';
import { createLogger } from '../../src/logging/index.js';
import {
  createNotifications,
  parseNotificationConfig,
  renderText,
  type NotificationMessage,
} from '../../src/notifications/index.js';
import { createMemoryRunStore } from '../../src/store/index.js';
import { createVirtualClock } from '../../src/timers/index.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');

describe('the duration a message tells', () => {
  it('after an approval gate: from the first start to the end (35.4 s), not the 0 s after the approval', async () => {
    const logger = createLogger({ level: 'error', destination: { write: () => undefined } });
    const config = parseNotificationConfig(
      'notifications:\n  channels:\n    audit:\n      type: webhook\n      url: http://127.0.0.1:9/audit\n      on: [waiting, succeeded]\n',
      'fleetbook.yaml',
      {},
    );
    const notify = createNotifications(config, { store: createMemoryRunStore(), logger }).hookFor([]);
    const book = playbook([
      step({ id: 'canary', kind: 'set', values: t({ updated: true }) }),
      step({ id: 'gate', kind: 'approval', message: t('canary fine?'), onTimeout: 'fail' }),
      step({ id: 'rest', kind: 'set', values: t({ updated: true }) }),
    ]);

    const first = await fastRun(book, { clock: createVirtualClock(START), notify });
    expect(first.result.status).toBe('waiting');
    const runId = first.result.runId;
    await recordApproval(first.store, { runId, decision: 'approved', by: 'alice' }, () => START + 30_000);
    // Another process resumes it 35.4 s after the run started.
    const resumed = await resumeRun(book, {
      runId,
      store: first.store,
      client: fakeClient({}),
      logger,
      env: {},
      outputsDir: '/nonexistent/fleetbook-fast-tests',
      clock: createVirtualClock(START + 35_400),
      notify,
    });
    expect(resumed.status).toBe('succeeded');

    const messages = (await first.store.listNotifications({ runId })).map(
      (row) => [row.event, row.message] as [string, NotificationMessage],
    );
    expect(messages.map(([event, message]) => [event, message.startedAt, message.durationMs])).toEqual([
      ['waiting', '2026-03-01T10:00:00.000Z', 0],
      ['succeeded', '2026-03-01T10:00:00.000Z', 35_400],
    ]);
    expect(renderText(messages[1]![1])).toContain('Duration: 35.4 s');
  });
});
