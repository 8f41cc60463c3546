import { describe, expect, it } from 'vitest';
import { createFaults } from './faults.js';

const tally = (faults: ReturnType<typeof createFaults>, operationId: string, times: number) => {
  const seen: Record<string, number> = {};
  for (let i = 0; i < times; i += 1) {
    const decision = faults.decide(operationId);
    const key = decision.drop ? `drop-${decision.drop}` : String(decision.status ?? 'served');
    seen[key] = (seen[key] ?? 0) + 1;
  }
  return seen;
};

describe('faults: rates of several rules on one route', () => {
  it('gives each status rule its own rate, not what the rules before it left over', () => {
    const faults = createFaults(1, () => 0);
    faults.set({
      rules: [
        { route: 'users.*', status: 503, rate: 0.2 },
        { route: 'users.listUsers', status: 500, rate: 0.2 },
        { route: '*', drop: 0.1 },
      ],
    });
    const seen = tally(faults, 'users.listUsers', 20_000);
    // Drawn independently and first-wins, the 500s would be 0.8 × 0.2 = 16% and the drops 6.4%.
    expect(seen['503']! / 20_000).toBeCloseTo(0.2, 1);
    expect(Math.abs(seen['500']! / 20_000 - 0.2)).toBeLessThan(0.015);
    expect(Math.abs(seen['drop-before']! / 20_000 - 0.1)).toBeLessThan(0.01);
    expect(Math.abs(seen.served! / 20_000 - 0.5)).toBeLessThan(0.015);
  });

  it('cuts rates that add up to more than every request: a later rule gets what is left', () => {
    const faults = createFaults(1, () => 0);
    faults.set({
      rules: [
        { route: 'users.getUser', status: 503, rate: 0.7 },
        { route: 'users.getUser', status: 500, rate: 0.7 },
      ],
    });
    const seen = tally(faults, 'users.getUser', 10_000);
    expect(seen.served).toBeUndefined();
    expect(Math.abs(seen['500']! / 10_000 - 0.3)).toBeLessThan(0.015);
  });

  it('a counted rule stops taking its share once used up', () => {
    const faults = createFaults(1, () => 0);
    faults.set({
      rules: [
        { route: 'users.getUser', status: 503, count: 2 },
        { route: 'users.getUser', status: 500, rate: 1 },
      ],
    });
    expect([0, 1, 2, 3].map(() => faults.decide('users.getUser').status)).toEqual([503, 503, 500, 500]);
  });
});

describe('faults: the random sequence', () => {
  it('runs on when faults are set again: the same settings set twice do not repeat the same draws', () => {
    const faults = createFaults(7, () => 0);
    const pattern = (): string => {
      faults.set({ rules: [{ route: '*', status: 503, rate: 0.5 }] });
      return Array.from({ length: 40 }, () => (faults.decide('users.getUser').status === 503 ? 'x' : '.')).join('');
    };
    const first = pattern();
    expect(pattern()).not.toBe(first);
    // Still reproducible: the same seed and the same sequence of settings and requests.
    const again = createFaults(7, () => 0);
    again.set({ rules: [{ route: '*', status: 503, rate: 0.5 }] });
    expect(Array.from({ length: 40 }, () => (again.decide('users.getUser').status === 503 ? 'x' : '.')).join('')).toBe(
      first,
    );
  });
});
