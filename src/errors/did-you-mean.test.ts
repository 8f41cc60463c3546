import { describe, expect, it } from 'vitest';
import { closestMatches, didYouMean, MAX_SUGGESTED_NAME_LENGTH, MAX_SUGGESTION_CANDIDATES } from './did-you-mean.js';

const known = ['privateCloud.runSoftwarePrechecks', 'privateCloud.runSoftwareUpdate', 'devices.addDevices'];

describe('didYouMean', () => {
  it('suggests the closest names for a typo', () => {
    expect(closestMatches('privateCloud.runSoftwarePrecheck', known)).toEqual(['privateCloud.runSoftwarePrechecks']);
    expect(didYouMean('devices.addDevice', known)).toBe(" Did you mean 'devices.addDevices'?");
  });

  it('says nothing when no name is close', () => {
    expect(didYouMean('users.inviteUser', known)).toBe('');
    // Replacing every letter is no typo.
    expect(didYouMean('zz', ['a', 'b', 'c'])).toBe('');
    expect(didYouMean('b1', ['a', 'b', 'c'])).toBe(" Did you mean 'b'?");
  });
});

describe('bounded', () => {
  // Unbounded, a 650 KB name took 17–22 s against the operations' names; no time is asserted here (bench/14 measures it).
  it('gives no suggestion for a name far longer than any, at once', () => {
    const huge = `devices.${'a'.repeat(650 * 1024)}`;
    expect(didYouMean(huge, known)).toBe('');
  });

  it('gives none for a name over the length limit, even one edit away from a known one', () => {
    const long = 'x'.repeat(MAX_SUGGESTED_NAME_LENGTH);
    expect(closestMatches(`${long}y`, [long])).toEqual([]);
    expect(closestMatches(`${long.slice(1)}y`, [long])).toEqual([long]);
  });

  it('compares a bounded number of candidates: a list of a million is read no further than its start', () => {
    let read = 0;
    function* million(): Generator<string> {
      for (; read < 1_000_000; read += 1) yield `name${read}`;
    }
    expect(closestMatches('nme1', million())).toContain('name1');
    expect(read).toBeLessThanOrEqual(MAX_SUGGESTION_CANDIDATES);
  });

  it('scores long names within the band only and keeps the suggestions of the full distance', () => {
    const long = `privateCloud.${'x'.repeat(200)}`;
    expect(closestMatches(`${long}y`, [long, `${long}yz`, 'short'])).toEqual([`${long}yz`, long]);
    expect(closestMatches(`${long}yyy`, [long, 'short'])).toEqual([long]);
    expect(closestMatches('maxParalel', ['maxParallelSystems', 'other'], 3, { prefixes: true })).toEqual([
      'maxParallelSystems',
    ]);
  });
});
