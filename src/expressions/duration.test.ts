import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

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
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'ms', '5', '1.5s', '30m1h', '1h 30m', '-1s', 'soon', -1, 1.5, null])('refuses %j', (value) => {
    if (value === '5') expect(parseDuration(value)).toBe(5);
    else expect(parseDuration(value)).toBeUndefined();
  });
});
