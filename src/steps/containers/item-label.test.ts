import { describe, expect, it } from 'vitest';
import { itemLabel } from './for-each.js';

describe('itemLabel: what the fleet grid calls an item', () => {
  it('is a string or number item itself, else its first naming field', () => {
    expect(itemLabel('hci-eu-01')).toBe('hci-eu-01');
    expect(itemLabel(42)).toBe('42');
    expect(itemLabel({ id: 'a1', name: 'hci-eu-01' })).toBe('hci-eu-01');
    expect(itemLabel({ id: 'a1', serialNumber: 'SN9' })).toBe('SN9');
    expect(itemLabel({ id: 7 })).toBe('7');
  });

  it('is nothing for an item without a name, and cut when long', () => {
    expect(itemLabel({ size: 3 })).toBeUndefined();
    expect(itemLabel(['a'])).toBeUndefined();
    expect(itemLabel('')).toBeUndefined();
    expect(itemLabel(null)).toBeUndefined();
    const cut = itemLabel('x'.repeat(500));
    expect(cut).toHaveLength(80);
    expect(cut?.endsWith('…')).toBe(true);
  });
});
