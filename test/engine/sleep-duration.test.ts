import { afterEach, describe, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('sleep of a duration computed at run time', () => {
  // Node's timers fire at once beyond 2^31-1 ms: without the bound this sleep ends at once and the run goes on.
  it('fails the step when the duration is longer than a timer can wait, and the next step does not run', async () => {
    harness = await startHarness();
    const result = await harness.run(
      playbook([
        step({ id: 'nap', kind: 'sleep', duration: t("${{ $duration('30d') }}") }),
        step({ id: 'next', kind: 'log', message: t('x'), level: 'info' }),
      ]),
    );
    expect(result.status).toBe('failed');
    expect(result.steps.map((s) => [s.path, s.status])).toEqual([
      ['nap', 'failed'],
      ['next', 'notStarted'],
    ]);
    expect(result.steps[0]?.error).toMatchObject({
      code: 'INVALID_DURATION',
      message:
        'sleep: 2592000000 is too long: a duration is at most 24d20h31m23s647ms (2147483647 ms, about 24.8 days), the longest a timer can wait',
    });
  });

  it('names a value that is no duration at all', async () => {
    harness = await startHarness();
    const result = await harness.run(playbook([step({ id: 'nap', kind: 'sleep', duration: t("${{ 'a while' }}") })]));
    expect(result.steps[0]?.error).toMatchObject({
      code: 'INVALID_DURATION',
      message: "sleep: 'a while' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m",
    });
  });
});
