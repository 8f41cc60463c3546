import { describe, expect, it } from 'vitest';
import { durationProblem, MAX_DURATION_MS, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1d', 86_400_000],
    ['1m30s250ms', 90_250],
    ['1500', 1500],
    [1500, 1500],
    ['24d20h31m23s647ms', MAX_DURATION_MS],
    [MAX_DURATION_MS, MAX_DURATION_MS],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'ms', '5', '1.5s', '30m1h', '1h 30m', '-1s', 'soon', -1, 1.5, null])('refuses %j', (value) => {
    if (value === '5') expect(parseDuration(value)).toBe(5);
    else expect(parseDuration(value)).toBeUndefined();
  });

  // Node's timers fire at once beyond 2^31-1 ms: a longer sleep would end at once.
  it.each(['30d', '24d20h31m23s648ms', '99999999999999999999d', MAX_DURATION_MS + 1, 1e20])(
    'refuses %j as longer than a timer can wait',
    (value) => {
      expect(parseDuration(value)).toBeUndefined();
      expect(durationProblem(value)).toMatch(
        /is too long: a duration is at most 24d20h31m23s647ms \(2147483647 ms, about 24\.8 days\)/,
      );
    },
  );

  it('takes a longer bound when the caller gives one, never beyond safe integers', () => {
    expect(parseDuration('30d', { maxMs: Number.MAX_SAFE_INTEGER })).toBe(2_592_000_000);
    expect(parseDuration('99999999999999999999d', { maxMs: Number.MAX_SAFE_INTEGER })).toBeUndefined();
  });

  it('says why a value is refused', () => {
    expect(durationProblem('5m')).toBeUndefined();
    expect(durationProblem('5 minutes')).toBe("'5 minutes' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m");
    expect(durationProblem(2_592_000_000)).toMatch(/^2592000000 is too long/);
  });
});
