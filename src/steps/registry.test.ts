import { describe, expect, it } from 'vitest';
import { callStep } from './definitions/call.js';
import { createStepRegistry } from './registry.js';

describe('createStepRegistry', () => {
  it('holds the built-in kinds', () => {
    expect(createStepRegistry().kinds).toEqual([
      'call',
      'set',
      'log',
      'assert',
      'fail',
      'sleep',
      'forEach',
      'parallel',
      'block',
      'uses',
      'http',
      'runs',
      'file',
      'email',
      'approval',
    ]);
  });

  it('refuses a kind declared twice', () => {
    expect(() => createStepRegistry([callStep, callStep])).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_STEP_KIND' }),
    );
  });

  it('names the known kinds when asked for an unknown one', () => {
    expect(() => createStepRegistry().get('forEch')).toThrow(
      "unknown step kind 'forEch'. Did you mean 'forEach'? Known kinds: call, set",
    );
  });
});
