import { describe, expect, it } from 'vitest';
import { InvalidFilterError } from './errors.js';
import { f } from './odata.js';

describe('filter builder', () => {
  it('writes every comparison operator', () => {
    expect(f.eq('version', '2.4.0')).toBe("version eq '2.4.0'");
    expect(f.ne('state', 'OFFLINE')).toBe("state ne 'OFFLINE'");
    expect(f.gt('count', 3)).toBe('count gt 3');
    expect(f.ge('ratio', 0.5)).toBe('ratio ge 0.5');
    expect(f.lt('createdAt', new Date('2026-01-02T03:04:05Z'))).toBe('createdAt lt 2026-01-02T03:04:05.000Z');
    expect(f.le('updatedAt', '2026-01-02T03:04:05+02:00')).toBe('updatedAt le 2026-01-02T03:04:05+02:00');
  });

  it('writes in, not, and, or, and the string functions', () => {
    expect(f.in('state', ['ONLINE', 'OFFLINE'])).toBe("state in ['ONLINE', 'OFFLINE']");
    expect(f.not(f.in('state', ['ONLINE']))).toBe("not (state in ['ONLINE'])");
    expect(f.and(f.eq('a', 1), f.eq('b', true))).toBe('a eq 1 and b eq true');
    expect(f.or(f.eq('a', 1), f.eq('b', false))).toBe('a eq 1 or b eq false');
    expect(f.and(f.or(f.eq('a', 1), f.eq('b', 2)), f.eq('c', 3))).toBe('(a eq 1 or b eq 2) and c eq 3');
    expect(f.or(f.and(f.eq('a', 1), f.eq('b', 2)), f.eq('c', 3))).toBe('a eq 1 and b eq 2 or c eq 3');
    expect(f.contains('username', 'ann')).toBe("contains(username, 'ann')");
    expect(f.startswith('username', 'ann')).toBe("startswith(username, 'ann')");
    expect(f.endswith('username', '.org')).toBe("endswith(username, '.org')");
  });

  it("writes 'in' with the property on the right: a list of values, and the user area's substring form", () => {
    expect(f.listIn(['ONLINE', 'OFFLINE'], 'state')).toBe("['ONLINE', 'OFFLINE'] in state");
    expect(f.listIn([1, null, true], ['softwareInfo', 'level'])).toBe('[1, null, true] in softwareInfo/level');
    expect(f.textIn('ann', 'username')).toBe("'ann' in username");
    expect(f.textIn('a+b@x', 'username')).toBe("'a%2Bb%40x' in username");
    expect(f.not(f.listIn(['a'], 'name'))).toBe("not (['a'] in name)");
    expect(f.and(f.textIn('ann', 'username'), f.eq('userStatus', 'VERIFIED'))).toBe(
      "'ann' in username and userStatus eq 'VERIFIED'",
    );
    expect(() => f.listIn([], 'state')).toThrow("'in' on 'state' needs at least one value.");
    expect(() => f.textIn('ann', 'user name')).toThrow(InvalidFilterError);
    expect(() => f.textIn(5 as unknown as string, 'username')).toThrow('takes a string, got a number');
  });

  it('writes null, booleans, numbers and nested paths', () => {
    expect(f.eq('application/id', null)).toBe('application/id eq null');
    expect(f.eq(['softwareInfo', 'version'], '2.4')).toBe("softwareInfo/version eq '2.4'");
    expect(f.eq('enabled', false)).toBe('enabled eq false');
    expect(f.eq('count', -12)).toBe('count eq -12');
  });

  it('percent-encodes the reserved characters inside string literals, and % itself', () => {
    expect(f.eq('name', "!#$&'()*+,/:;=?@[]")).toBe("name eq '%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D'");
    expect(f.eq('name', "O'Brien 100% a/b")).toBe("name eq 'O%27Brien 100%25 a%2Fb'");
    expect(f.contains('email', 'a+b@x')).toBe("contains(email, 'a%2Bb%40x')");
    // Encoded quotes cannot end the literal, so and/or still see one operand.
    expect(f.and(f.eq('name', "x' or y eq 'z"), f.eq('c', 1))).toBe("name eq 'x%27 or y eq %27z' and c eq 1");
  });

  it('refuses property paths and literals the grammar cannot hold', () => {
    expect(() => f.eq('bad name', 1)).toThrow(InvalidFilterError);
    expect(() => f.eq('a//b', 1)).toThrow(InvalidFilterError);
    expect(() => f.gt('count', 'ten')).toThrow("'ten' is not an RFC 3339 timestamp");
    expect(() => f.eq('count', Number.NaN)).toThrow(InvalidFilterError);
    expect(() => f.in('state', [])).toThrow(InvalidFilterError);
  });
});
