import { describe, expect, it } from 'vitest';
import { createRng } from './rng.js';

describe('createRng', () => {
  it('gives the same sequence for the same seed and another for another seed', () => {
    const draw = (seed: number) => {
      const rng = createRng(seed);
      return [rng.next(), rng.int(1, 6), rng.uuid()];
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it('keeps next() in [0, 1) and int() within its bounds', () => {
    const rng = createRng(3);
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i += 1) {
      const x = rng.next();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      seen.add(rng.int(2, 4));
    }
    expect([...seen].sort()).toEqual([2, 3, 4]);
  });

  it('formats uuids as version 4', () => {
    const rng = createRng(1);
    for (let i = 0; i < 100; i += 1) {
      expect(rng.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('forks by label only: drawing from the parent does not change a fork', () => {
    const a = createRng(5);
    const b = createRng(5);
    b.next();
    b.uuid();
    expect(a.fork('devices').uuid()).toBe(b.fork('devices').uuid());
    expect(a.fork('devices').uuid()).not.toBe(a.fork('users').uuid());
  });

  it('refuses to pick from nothing', () => {
    expect(() => createRng(1).pick([])).toThrow(RangeError);
  });
});
