import { describe, expect, it } from 'vitest';
import { isGeneratedStepId, ordinal, stepLabel } from './step-label.js';

describe('stepLabel', () => {
  it('leaves a path whose step has an id written by hand as it is', () => {
    expect(stepLabel('deliver.notify')).toBe('deliver.notify');
    expect(stepLabel('rollout[0].update.resumes[0].state', 12)).toBe('rollout[0].update.resumes[0].state');
  });

  it('names a step without an id by its kind, its place among its siblings and its line', () => {
    expect(stepLabel('deliver.fail#4.2', 42)).toBe('`fail` (2nd step of `deliver`, line 42)');
    expect(stepLabel('log#3')).toBe('`log` (3rd step)');
    expect(stepLabel('rollout[1].update.call#5.1.11', 7)).toBe('`call` (11th step of `rollout[1].update`, line 7)');
    expect(stepLabel('forEach#2[3]')).toBe('item 3 of `forEach` (2nd step)');
  });

  it('tells a generated id from one written by hand', () => {
    expect(isGeneratedStepId('fail#4.2')).toBe(true);
    expect(isGeneratedStepId('deliver')).toBe(false);
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal)).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '101st',
      '111th',
    ]);
  });
});
