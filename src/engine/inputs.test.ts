import { describe, expect, it } from 'vitest';
import type { InputSpec } from '../playbook/index.js';
import { parseInputText, resolveInputs } from './inputs.js';

const spec = (type: InputSpec['type'], extra: Partial<InputSpec> = {}): InputSpec => ({
  type,
  secret: false,
  required: extra.default === undefined,
  schema: { type },
  ...extra,
});

describe('resolveInputs', () => {
  const specs = {
    version: spec('string'),
    parallel: spec('integer', { default: 2, required: false, schema: { type: 'integer', minimum: 1 } }),
    token: spec('string', { secret: true, default: 'x', required: false }),
  };

  it('applies defaults and lists the secret inputs', () => {
    expect(resolveInputs(specs, { version: '2.4.0', token: 'abcd' }, 'p')).toEqual({
      values: { version: '2.4.0', parallel: 2, token: 'abcd' },
      secretNames: ['token'],
    });
  });

  it('names every missing, unknown and ill-typed input at once, never echoing a secret', () => {
    const error = (() => {
      try {
        resolveInputs(specs, { parallel: 0, colour: 'red', token: 42 }, 'p');
      } catch (caught) {
        return caught as Error & { code: string; exitCode: number };
      }
      throw new Error('expected an error');
    })();
    expect(error).toMatchObject({ code: 'INVALID_INPUTS', exitCode: 2 });
    expect(error.message).toContain("unknown input 'colour' (it takes: version, parallel, token)");
    expect(error.message).toContain("input 'version' (string) is required");
    expect(error.message).toContain("input 'parallel' must be >= 1");
    expect(error.message).toContain('got a secret value');
    expect(error.message).not.toContain('42');
  });
});

describe('parseInputText', () => {
  it('keeps strings as text and reads other types as JSON', () => {
    expect(parseInputText(spec('string'), '007')).toBe('007');
    expect(parseInputText(spec('integer'), '7')).toBe(7);
    expect(parseInputText(spec('array'), '["a","b"]')).toEqual(['a', 'b']);
    expect(parseInputText(spec('integer'), 'seven')).toBe('seven');
  });

  it('takes names inherited by plain objects for what they are: unknown inputs, never declared ones or defaults', () => {
    const given = JSON.parse('{"__proto__": {"version": "9.9.9"}, "toString": 1}') as Record<string, unknown>;
    expect(() => resolveInputs({ version: spec('string') }, given, 'p')).toThrow(
      /unknown input '__proto__'.*unknown input 'toString'.*input 'version' \(string\) is required/,
    );
  });
});
