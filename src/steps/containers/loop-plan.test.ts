import { describe, expect, it } from 'vitest';
import { batchSizes, concurrencyOf, toleratedFailures } from './loop-plan.js';

describe('batchSizes', () => {
  it('covers the items with counts and percentages, the last entry repeating', () => {
    expect(batchSizes([1, '25%', '100%'], 10)).toEqual([1, 3, 6]);
    expect(batchSizes([2], 7)).toEqual([2, 2, 2, 1]);
    expect(batchSizes(['10%'], 3)).toEqual([1, 1, 1]);
    expect(batchSizes(undefined, 4)).toEqual([4]);
    expect(batchSizes([1, 5], 0)).toEqual([]);
  });

  it('refuses what is neither a count nor a percentage', () => {
    expect(() => batchSizes(['half'], 4)).toThrow(
      /A batch size must be a whole number or a percentage like "25%", got "half"/,
    );
    expect(() => batchSizes(['150%'], 4)).toThrow(/percentage/);
  });
});

describe('toleratedFailures', () => {
  it('is a count, or a percentage of all items rounded down; none by default', () => {
    expect(toleratedFailures(undefined, 10)).toBe(0);
    expect(toleratedFailures(3, 10)).toBe(3);
    expect(toleratedFailures('25%', 10)).toBe(2);
    expect(() => toleratedFailures(-1, 10)).toThrow(/tolerate.failures/);
  });
});

describe('concurrencyOf', () => {
  it('takes a whole number from 1', () => {
    expect(concurrencyOf(3)).toBe(3);
    expect(() => concurrencyOf(0)).toThrow(/`concurrency` must be a whole number from 1, got 0/);
    expect(() => concurrencyOf('2')).toThrow(/got "2"/);
  });
});
