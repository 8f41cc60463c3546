import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  closedBecause,
  closesAt,
  isOpen,
  nextOpen,
  startGateOf,
  WEEKDAYS,
  type TimeRules,
  type WindowSpec,
} from './index.js';

const at = (iso: string): number => Date.parse(iso);
const berlin = (weekly: WindowSpec['weekly']): TimeRules => ({
  windows: [{ timezone: 'Europe/Berlin', weekly, onClose: 'wait' }],
  freezes: [],
});

describe('a weekly window', () => {
  const weekend = berlin([{ days: ['sat', 'sun'], from: '01:00', to: '06:00' }]);

  it('is open inside a range and closed outside it', () => {
    // 2026-11-28 is a Saturday; Berlin is UTC+1 in winter.
    expect(isOpen(weekend, at('2026-11-28T00:00:00Z'))).toBe(true);
    expect(isOpen(weekend, at('2026-11-27T23:59:59.999Z'))).toBe(false);
    expect(isOpen(weekend, at('2026-11-28T05:00:00Z'))).toBe(false);
    expect(isOpen(weekend, at('2026-11-30T00:00:00Z'))).toBe(false);
    expect(closedBecause(weekend, at('2026-11-30T00:00:00Z'))?.reason).toBe('window');
  });

  it('opens next at the start of the next range, and closes at its end', () => {
    expect(nextOpen(weekend, at('2026-11-25T12:00:00Z'))).toBe(at('2026-11-28T00:00:00Z'));
    expect(nextOpen(weekend, at('2026-11-28T05:00:00Z'))).toBe(at('2026-11-29T00:00:00Z'));
    expect(nextOpen(weekend, at('2026-11-28T02:00:00Z'))).toBe(at('2026-11-28T02:00:00Z'));
    expect(closesAt(weekend, at('2026-11-28T02:00:00Z'))).toBe(at('2026-11-28T05:00:00Z'));
    expect(closesAt(weekend, at('2026-11-26T02:00:00Z'))).toBe(at('2026-11-26T02:00:00Z'));
  });

  it('crosses midnight when `to` is not after `from`, closing the next day', () => {
    const nights = berlin([{ days: ['fri'], from: '22:00', to: '02:00' }]);
    // Friday 2026-11-27 22:00 Berlin is 21:00Z; Saturday 02:00 is 01:00Z.
    expect(isOpen(nights, at('2026-11-28T00:30:00Z'))).toBe(true);
    expect(closesAt(nights, at('2026-11-27T21:00:00Z'))).toBe(at('2026-11-28T01:00:00Z'));
    expect(isOpen(nights, at('2026-11-28T01:00:00Z'))).toBe(false);
  });

  it('merges ranges that touch into one stretch', () => {
    const long = berlin([
      { days: ['sat'], from: '20:00', to: '24:00' },
      { days: ['sun'], from: '00:00', to: '04:00' },
    ]);
    expect(closesAt(long, at('2026-11-28T20:00:00Z'))).toBe(at('2026-11-29T03:00:00Z'));
  });

  it('says when it never closes or never opens', () => {
    const always = berlin([{ days: [...WEEKDAYS], from: '00:00', to: '24:00' }]);
    expect(closesAt(always, at('2026-11-28T20:00:00Z'))).toBeUndefined();
    const never: TimeRules = {
      windows: [
        { timezone: 'UTC', weekly: [{ days: ['mon'], from: '01:00', to: '02:00' }], onClose: 'wait' },
        { timezone: 'UTC', weekly: [{ days: ['tue'], from: '01:00', to: '02:00' }], onClose: 'wait' },
      ],
      freezes: [],
    };
    expect(nextOpen(never, at('2026-11-28T20:00:00Z'))).toBeUndefined();
  });
});

describe('the start gate of a window', () => {
  const gate = startGateOf(berlin([{ days: ['sat'], from: '01:00', to: '06:00' }]));

  it('lets work start while open and refuses from the closing instant, saying when it opens', () => {
    expect(gate.refusal(at('2026-11-28T00:00:00Z'))).toBeUndefined();
    expect(gate.refusal(at('2026-11-28T04:59:59.999Z'))).toBeUndefined();
    expect(gate.refusal(at('2026-11-28T05:00:00Z'))).toEqual({
      reason:
        'the maintenance window is closed; it opens next at 2026-12-05 01:00 Europe/Berlin (2026-12-05T00:00:00.000Z)',
      opensAtMs: at('2026-12-05T00:00:00Z'),
    });
    // Asked again at an earlier time (another clock): not misled by what it remembered.
    expect(gate.refusal(at('2026-11-27T12:00:00Z'))).toMatchObject({ opensAtMs: at('2026-11-28T00:00:00Z') });
    expect(gate.onClose).toBe('wait');
  });
});

describe('a window on the DST days of Europe/Berlin', () => {
  // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z). 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z).
  it('spring: a range ending after the gap is an hour shorter in real time', () => {
    const rules = berlin([{ days: ['sun'], from: '01:00', to: '03:30' }]);
    expect(nextOpen(rules, at('2026-03-28T12:00:00Z'))).toBe(at('2026-03-29T00:00:00Z'));
    expect(closesAt(rules, at('2026-03-29T00:00:00Z'))).toBe(at('2026-03-29T01:30:00Z'));
  });

  it('spring: a range starting in the gap opens when the clocks jump', () => {
    const rules = berlin([{ days: ['sun'], from: '02:30', to: '04:00' }]);
    expect(nextOpen(rules, at('2026-03-28T12:00:00Z'))).toBe(at('2026-03-29T01:00:00Z'));
    expect(isOpen(rules, at('2026-03-29T00:59:59Z'))).toBe(false);
  });

  it('spring: a range inside the gap does not open that day', () => {
    const rules = berlin([{ days: ['sun'], from: '02:00', to: '02:30' }]);
    // The next Sunday, 02:00 CEST, is 00:00Z.
    expect(nextOpen(rules, at('2026-03-28T12:00:00Z'))).toBe(at('2026-04-05T00:00:00Z'));
  });

  it('autumn: the repeated hour counts once (its first occurrence)', () => {
    const rules = berlin([{ days: ['sun'], from: '02:00', to: '02:30' }]);
    expect(nextOpen(rules, at('2026-10-24T12:00:00Z'))).toBe(at('2026-10-25T00:00:00Z'));
    expect(closesAt(rules, at('2026-10-25T00:00:00Z'))).toBe(at('2026-10-25T00:30:00Z'));
    // 02:15 CET, the second time the wall clock shows it, is not in the window.
    expect(isOpen(rules, at('2026-10-25T01:15:00Z'))).toBe(false);
  });

  it('autumn: a range across the repeated hour is an hour longer in real time', () => {
    const rules = berlin([{ days: ['sun'], from: '01:00', to: '03:30' }]);
    expect(nextOpen(rules, at('2026-10-24T12:00:00Z'))).toBe(at('2026-10-24T23:00:00Z'));
    expect(closesAt(rules, at('2026-10-24T23:00:00Z'))).toBe(at('2026-10-25T02:30:00Z'));
  });
});

describe('a freeze', () => {
  const rules: TimeRules = {
    windows: [],
    freezes: [{ from: '2026-12-20', to: '2027-01-03', reason: 'year-end freeze', timezone: 'Europe/Berlin' }],
  };

  it('holds from the first date to the end of the last, in its timezone', () => {
    expect(isOpen(rules, at('2026-12-19T22:59:59Z'))).toBe(true);
    expect(isOpen(rules, at('2026-12-19T23:00:00Z'))).toBe(false);
    expect(closedBecause(rules, at('2026-12-25T12:00:00Z'))).toMatchObject({ reason: 'freeze' });
    expect(nextOpen(rules, at('2026-12-25T12:00:00Z'))).toBe(at('2027-01-03T23:00:00Z'));
    expect(closesAt(rules, at('2026-12-01T00:00:00Z'))).toBe(at('2026-12-19T23:00:00Z'));
  });

  it('moves the next opening of a window past it', () => {
    const both: TimeRules = { ...rules, windows: berlin([{ days: ['sat'], from: '01:00', to: '06:00' }]).windows };
    // Saturdays 2026-12-26 and 2027-01-02 are frozen; 2027-01-09 01:00 CET is 00:00Z.
    expect(nextOpen(both, at('2026-12-20T12:00:00Z'))).toBe(at('2027-01-09T00:00:00Z'));
    // A window open when the freeze begins closes with it.
    expect(closesAt(both, at('2026-12-19T00:30:00Z'))).toBe(at('2026-12-19T05:00:00Z'));
  });
});

// CPU-bound (each case walks calendars day by day): a minute each, for a machine shared by many.
describe('window maths over random instants', () => {
  const minute = fc.integer({ min: 0, max: 24 * 60 - 1 });
  const hhmm = (minutes: number): string =>
    `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  const range = fc
    .record({
      days: fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 }),
      from: minute,
      to: fc.integer({ min: 0, max: 24 * 60 }),
    })
    .filter(({ from, to }) => from !== to)
    .map(({ days, from, to }) => ({ days, from: hhmm(from), to: to === 1440 ? '24:00' : hhmm(to) }));
  const timezone = fc.constantFrom('Europe/Berlin', 'America/New_York', 'UTC', 'Australia/Lord_Howe', 'Asia/Kolkata');
  const window = fc.record({
    timezone,
    weekly: fc.array(range, { minLength: 1, maxLength: 3 }),
    onClose: fc.constant('wait' as const),
  });
  const day = fc.integer({ min: Date.parse('2025-01-01'), max: Date.parse('2028-12-31') });
  const freeze = fc
    .record({ start: day, days: fc.integer({ min: 0, max: 20 }), timezone })
    .map(({ start, days, timezone: zone }) => ({
      from: new Date(start).toISOString().slice(0, 10),
      to: new Date(start + days * 86_400_000).toISOString().slice(0, 10),
      timezone: zone,
    }));
  const rules = fc.record({
    windows: fc.array(window, { minLength: 0, maxLength: 2 }),
    freezes: fc.array(freeze, { maxLength: 2 }),
  });
  // Around the DST changes of the zones above more often than chance would.
  const dstDays = ['2026-03-29T00:00:00Z', '2026-10-25T00:00:00Z', '2026-03-08T06:00:00Z', '2026-04-05T14:00:00Z'];
  const instant = fc.oneof(
    fc.integer({ min: Date.parse('2025-01-01'), max: Date.parse('2029-01-01') }),
    fc
      .tuple(fc.constantFrom(...dstDays), fc.integer({ min: -2 * 86_400_000, max: 2 * 86_400_000 }))
      .map(([iso, offset]) => Date.parse(iso) + offset),
  );

  it('nextOpen is open, not before t, and skips no open instant', () => {
    fc.assert(
      fc.property(rules, instant, (calendar, t) => {
        const next = nextOpen(calendar, t);
        if (next === undefined) return;
        expect(next).toBeGreaterThanOrEqual(t);
        expect(isOpen(calendar, next)).toBe(true);
        if (isOpen(calendar, t)) expect(next).toBe(t);
        // Every instant between t and the opening is closed (sampled, and the millisecond before).
        for (let step = 0; step < 40; step += 1) {
          const probe = t + Math.floor(((next - t) * step) / 40);
          if (probe < next) expect(isOpen(calendar, probe)).toBe(false);
        }
        if (next > t) expect(isOpen(calendar, next - 1)).toBe(false);
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it('closesAt bounds an open stretch: open up to it, closed at it', () => {
    fc.assert(
      fc.property(rules, instant, (calendar, t) => {
        const open = nextOpen(calendar, t);
        if (open === undefined) return;
        const closes = closesAt(calendar, open);
        if (closes === undefined) return;
        expect(closes).toBeGreaterThan(open);
        expect(isOpen(calendar, closes)).toBe(false);
        expect(isOpen(calendar, closes - 1)).toBe(true);
        for (let step = 0; step < 20; step += 1)
          expect(isOpen(calendar, open + Math.floor(((closes - open) * step) / 20))).toBe(true);
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});
