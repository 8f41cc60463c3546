import { describe, expect, it } from 'vitest';
import { createFireTimes } from '../../src/scheduler/fire-times.js';
import { isSchedulerError } from '../../src/scheduler/scheduler-error.js';

/** `take` as `UTC instant | local wall time`, the way an operator checks a schedule. */
function fires(cron: string, timezone: string, afterIso: string, count: number): string[] {
  return createFireTimes(cron, timezone)
    .take(Date.parse(afterIso), count)
    .map(
      (at) =>
        `${new Date(at).toISOString().slice(0, 16)}Z | ${new Date(at).toLocaleString('sv-SE', { timeZone: timezone }).slice(0, 16)}`,
    );
}

describe('fire times across DST changes', () => {
  describe('Europe/Berlin (spring forward 2025-03-30 02:00→03:00, fall back 2025-10-26 03:00→02:00)', () => {
    it('fires a daily time inside the skipped hour once, at the next valid time (03:00)', () => {
      expect(fires('30 2 * * *', 'Europe/Berlin', '2025-03-28T12:00:00Z', 3)).toEqual([
        '2025-03-29T01:30Z | 2025-03-29 02:30',
        '2025-03-30T01:00Z | 2025-03-30 03:00',
        '2025-03-31T00:30Z | 2025-03-31 02:30',
      ]);
    });
    it('fires an hourly schedule once at 03:00 for the skipped 02:00 and 03:00', () => {
      expect(fires('0 * * * *', 'Europe/Berlin', '2025-03-29T23:30:00Z', 3)).toEqual([
        '2025-03-30T00:00Z | 2025-03-30 01:00',
        '2025-03-30T01:00Z | 2025-03-30 03:00',
        '2025-03-30T02:00Z | 2025-03-30 04:00',
      ]);
    });
    it('fires a daily time inside the repeated hour once, at its first occurrence', () => {
      expect(fires('30 2 * * *', 'Europe/Berlin', '2025-10-25T12:00:00Z', 2)).toEqual([
        '2025-10-26T00:30Z | 2025-10-26 02:30',
        '2025-10-27T01:30Z | 2025-10-27 02:30',
      ]);
    });
    it('does not fire the repeated wall times again when asked from inside the second occurrence', () => {
      // 01:15Z is 02:15 CET, the second 02:15 of the night: 02:30 already fired at 00:30Z.
      expect(fires('*/30 * * * *', 'Europe/Berlin', '2025-10-26T01:15:00Z', 2)).toEqual([
        '2025-10-26T02:00Z | 2025-10-26 03:00',
        '2025-10-26T02:30Z | 2025-10-26 03:30',
      ]);
    });
    it('fires an hourly schedule once per wall hour through the fall-back night', () => {
      expect(fires('0 * * * *', 'Europe/Berlin', '2025-10-25T23:30:00Z', 3)).toEqual([
        '2025-10-26T00:00Z | 2025-10-26 02:00',
        '2025-10-26T02:00Z | 2025-10-26 03:00',
        '2025-10-26T03:00Z | 2025-10-26 04:00',
      ]);
    });
  });

  describe('America/New_York (spring forward 2025-03-09 02:00→03:00, fall back 2025-11-02 02:00→01:00)', () => {
    it('fires 02:30 on the spring-forward day at 03:00 EDT', () => {
      expect(fires('30 2 * * *', 'America/New_York', '2025-03-08T12:00:00Z', 3)).toEqual([
        '2025-03-09T07:00Z | 2025-03-09 03:00',
        '2025-03-10T06:30Z | 2025-03-10 02:30',
        '2025-03-11T06:30Z | 2025-03-11 02:30',
      ]);
    });
    it('fires 01:30 on the fall-back day once, in EDT', () => {
      expect(fires('30 1 * * *', 'America/New_York', '2025-11-01T12:00:00Z', 2)).toEqual([
        '2025-11-02T05:30Z | 2025-11-02 01:30',
        '2025-11-03T06:30Z | 2025-11-03 01:30',
      ]);
    });
    it('keeps a weekly Saturday 02:00 at 02:00 local on both sides of the change', () => {
      expect(fires('0 2 * * SAT', 'America/New_York', '2025-10-20T00:00:00Z', 2)).toEqual([
        '2025-10-25T06:00Z | 2025-10-25 02:00',
        '2025-11-01T06:00Z | 2025-11-01 02:00',
      ]);
      expect(fires('0 2 * * SAT', 'America/New_York', '2025-11-02T00:00:00Z', 1)).toEqual([
        '2025-11-08T07:00Z | 2025-11-08 02:00',
      ]);
    });
  });

  it('reads six fields as seconds first, aliases, and UTC by default', () => {
    expect(
      createFireTimes('*/20 * * * * *')
        .take(Date.parse('2025-01-01T00:00:00.500Z'), 2)
        .map((at) => new Date(at).toISOString()),
    ).toEqual(['2025-01-01T00:00:20.000Z', '2025-01-01T00:00:40.000Z']);
    expect(
      createFireTimes('@daily', 'Europe/Berlin')
        .take(Date.parse('2025-06-01T00:00:00Z'), 1)
        .map((at) => new Date(at).toISOString()),
    ).toEqual(['2025-06-01T22:00:00.000Z']);
  });

  it('lists the fires of a downtime, keeping the newest when there are more than asked for', () => {
    const daily = createFireTimes('0 6 * * *', 'UTC');
    const between = daily.between(Date.parse('2025-01-01T06:00:00Z'), Date.parse('2025-01-04T07:00:00Z'), 2);
    expect(between.map((at) => new Date(at).toISOString())).toEqual([
      '2025-01-03T06:00:00.000Z',
      '2025-01-04T06:00:00.000Z',
    ]);
  });

  it('refuses a bad expression or timezone with a code', () => {
    for (const [cron, timezone, code] of [
      ['61 * * * *', 'UTC', 'INVALID_CRON'],
      ['0 0 30 2 *', 'UTC', 'INVALID_CRON'],
      ['0 2 * * *', 'Europe/Atlantis', 'INVALID_TIMEZONE'],
    ] as const) {
      let caught: unknown;
      try {
        createFireTimes(cron, timezone);
      } catch (error) {
        caught = error;
      }
      expect(isSchedulerError(caught) && caught.code).toBe(code);
    }
  });
});

describe('fires between two instants', () => {
  it('agrees with walking forward, across both DST nights, in both directions of the repeated hour', () => {
    for (const [cron, timezone, fromIso, untilIso] of [
      ['*/20 * * * *', 'Europe/Berlin', '2025-03-29T22:00:00Z', '2025-03-30T03:00:00Z'],
      ['*/20 * * * *', 'Europe/Berlin', '2025-10-25T22:00:00Z', '2025-10-26T01:30:00Z'],
      ['*/20 * * * *', 'Europe/Berlin', '2025-10-25T22:00:00Z', '2025-10-26T04:00:00Z'],
      ['30 1 * * *', 'America/New_York', '2025-10-30T00:00:00Z', '2025-11-04T00:00:00Z'],
      ['30 2 * * *', 'America/New_York', '2025-03-07T00:00:00Z', '2025-03-12T00:00:00Z'],
    ] as const) {
      const fireTimes = createFireTimes(cron, timezone);
      const from = Date.parse(fromIso);
      const until = Date.parse(untilIso);
      const forward = fireTimes.take(from, 1000).filter((at) => at <= until);
      expect(fireTimes.between(from, until, 1000), `${cron} ${timezone} until ${untilIso}`).toEqual(forward);
      expect(fireTimes.between(from, until, 3)).toEqual(forward.slice(-3));
    }
  });

  it('finds the newest fires of three days of a per-second schedule without walking them all', () => {
    const started = performance.now();
    const fires = createFireTimes('* * * * * *').between(
      Date.parse('2025-01-01T00:00:00Z'),
      Date.parse('2025-01-04T00:00:00Z'),
      101,
    );
    expect(fires).toHaveLength(101);
    expect(new Date(fires.at(-1) ?? 0).toISOString()).toBe('2025-01-04T00:00:00.000Z');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
