import { afterEach, describe, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness();
  return harness;
}

describe('how a run ends', () => {
  it('renders and stores the playbook outputs after a failure, as far as they render', async () => {
    const h = await start();
    const result = await h.run(
      playbook(
        [
          step({ id: 'table', kind: 'set', values: t({ rows: ['sys-1 UP_TO_DATE', 'sys-2 FAILED'] }) }),
          step({ id: 'boom', kind: 'fail', message: t('sys-2 failed') }),
        ],
        { outputs: t({ table: '${{ steps.table.outputs.rows }}', failedAt: '${{ steps.boom.error.message }}' }) },
      ),
    );
    expect(result).toMatchObject({
      status: 'failed',
      outputs: { table: ['sys-1 UP_TO_DATE', 'sys-2 FAILED'], failedAt: 'sys-2 failed' },
    });
    expect(await h.store.getRun(result.runId)).toMatchObject({
      status: 'failed',
      outputs: { table: ['sys-1 UP_TO_DATE', 'sys-2 FAILED'] },
      error: { message: 'sys-2 failed' },
    });
  });

  it('logs outputs that cannot be rendered after a failure, and keeps the failure as the error', async () => {
    const h = await start();
    const result = await h.run(
      playbook([step({ id: 'boom', kind: 'fail', message: t('the real cause') })], {
        outputs: t('${{ $error("outputs broke") }}'),
      }),
    );
    expect(result.status).toBe('failed');
    expect(result.outputs).toBeUndefined();
    expect(result.error).toMatchObject({ message: 'the real cause', code: 'FAILED_BY_PLAYBOOK' });
    expect(h.lines().find((line) => String(line.msg).includes('outputs') && line.level === 40)).toMatchObject({
      error: { message: expect.stringContaining('outputs broke') },
    });
  });

  it('still fails a successful run whose outputs cannot be rendered', async () => {
    const h = await start();
    const result = await h.run(
      playbook([step({ id: 'ok', kind: 'set', values: t({ a: 1 }) })], {
        outputs: t('${{ $error("outputs broke") }}'),
      }),
    );
    expect(result).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('outputs broke') } });
  });

  it('names the error that failed the run, not an earlier failure that was continued', async () => {
    const h = await start();
    const result = await h.run(
      playbook([
        step({ id: 'tolerated', kind: 'fail', message: t('not fatal'), continueOnError: true }),
        step({ id: 'fatal', kind: 'assert', condition: t(false), message: t('this one stopped the run') }),
      ]),
    );
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ message: 'this one stopped the run', code: 'ASSERTION_FAILED' });
    expect((await h.store.getRun(result.runId))?.error).toEqual({
      message: 'this one stopped the run',
      code: 'ASSERTION_FAILED',
    });
  });
});

describe('log steps', () => {
  it('logs null for a message that renders to nothing, instead of failing', async () => {
    const h = await start();
    const result = await h.run(
      playbook([step({ id: 'say', kind: 'log', level: 'info', message: t('${{ steps.nothing.outputs.missing }}') })]),
    );
    expect(result.status).toBe('succeeded');
    expect(h.lines().find((line) => line.playbookLog === true)).toMatchObject({ stepId: 'say', msg: 'null' });
    const finished = (await h.store.journal(result.runId))
      .map((entry) => entry.event)
      .find((event) => event.type === 'step.finished' && event.path === 'say');
    expect(finished).toMatchObject({ status: 'succeeded', outputs: { message: 'null' } });
  });
});
