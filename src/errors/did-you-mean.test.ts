import { describe, expect, it } from 'vitest';
import { closestMatches, didYouMean } from './did-you-mean.js';

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
