import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { resumeRun } from '../../src/engine/index.js';
import { createLogger } from '../../src/logging/index.js';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('the summary of a resumed run', () => {
  it('shows a replayed step that was rescued as rescued', async () => {
    harness = await startHarness();
    const book = playbook(
      [
        step({
          id: 'risky',
          kind: 'fail',
          message: t('first try'),
          rescue: [step({ id: 'recover', kind: 'set', values: t({ ok: true }) })],
        }),
        step({ id: 'gate', kind: 'assert', condition: t('${{ inputs.open }}') }),
      ],
      {
        inputs: {
          open: { type: 'boolean', secret: false, required: false, default: false, schema: { type: 'boolean' } },
        },
      },
    );
    const first = await harness.run(book);
    expect(first.status).toBe('failed');
    expect(first.steps.find((s) => s.path === 'risky')).toMatchObject({ status: 'succeeded', rescued: true });
    const logger = createLogger({
      destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
      level: 'silent',
    });
    const resumed = await resumeRun(book, { runId: first.runId, client: harness.client, store: harness.store, logger });
    expect(resumed.steps.find((s) => s.path === 'risky')).toMatchObject({
      status: 'succeeded',
      replayed: true,
      rescued: true,
    });
    // A step that simply succeeded is not rescued.
    expect(resumed.steps.find((s) => s.path === 'risky.recover')).toMatchObject({
      status: 'succeeded',
      replayed: true,
    });
    expect(resumed.steps.find((s) => s.path === 'risky.recover')?.rescued).toBeUndefined();
  });
});
