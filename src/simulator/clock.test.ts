import { describe, expect, it, vi } from 'vitest';
import { createSimClock } from './clock.js';

describe('createSimClock', () => {
  it('starts at startMs and moves by advance()', () => {
    const clock = createSimClock({ startMs: Date.UTC(2025, 0, 1) });
    expect(clock.now() - Date.UTC(2025, 0, 1)).toBeLessThan(50);
    clock.advance(3_600_000);
    expect(clock.nowIso().startsWith('2025-01-01T01:00:0')).toBe(true);
  });

  it('runs timeScale times faster than real time', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const clock = createSimClock({ timeScale: 1000, startMs: 0 });
      vi.advanceTimersByTime(30);
      expect(clock.now()).toBe(30_000);
      expect(clock.wallNow()).toBe(30);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects a time scale or advance that is not positive', () => {
    expect(() => createSimClock({ timeScale: 0 })).toThrow(/timeScale/);
    expect(() => createSimClock().advance(-1)).toThrow(/ms/);
  });
});
