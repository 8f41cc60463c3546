// The catch-up decision of a tick, without a store or a timer: which fires are due, which is on time, which run late.
import { describe, expect, it } from 'vitest';
import type { ScheduleSpec } from '../playbook/index.js';
import { planDue } from './fire-due.js';
import { createFireTimes } from './fire-times.js';
import type { ScheduleState } from './schedule-state.js';

const HOUR = 3_600_000;
const at = (iso: string): number => Date.parse(iso);
const hourly = createFireTimes('0 * * * *', 'UTC');
const schedule = (fields: Partial<ScheduleSpec>): ScheduleSpec => ({ catchUp: 'none', ...fields }) as ScheduleSpec;
const state = (lastFireAt: string): ScheduleState => ({
  activeSince: '2026-03-01T00:00:00.000Z',
  fingerprint: '',
  lastFireAt,
  consecutiveFailures: 0,
  paused: false,
  queued: [],
  unfinished: [],
});

describe('planDue', () => {
  it('fires the hour just passed on time, within the late tolerance', () => {
    const plan = planDue(schedule({}), hourly, state('2026-03-01T09:00:00.000Z'), at('2026-03-01T10:00:30Z'));
    expect(plan).toMatchObject({
      due: [at('2026-03-01T10:00:00Z')],
      onTime: at('2026-03-01T10:00:00Z'),
      missed: [],
      catchUps: [],
      passed: [],
    });
  });

  it('catchUp none passes over every fire missed, the one now late among them', () => {
    const plan = planDue(
      schedule({ catchUp: 'none' }),
      hourly,
      state('2026-03-01T07:00:00.000Z'),
      at('2026-03-01T10:05:00Z'),
    );
    expect(plan.onTime).toBeUndefined();
    expect(plan.catchUps).toEqual([]);
    expect(plan.passed).toEqual([8, 9, 10].map((hour) => at('2026-03-01T00:00:00Z') + hour * HOUR));
    expect(plan.passedBecause).toBe('catchUp is none');
  });

  it('catchUp last fires only the newest missed, and none when a fire is due on time', () => {
    const late = planDue(
      schedule({ catchUp: 'last' }),
      hourly,
      state('2026-03-01T07:00:00.000Z'),
      at('2026-03-01T10:05:00Z'),
    );
    expect(late.catchUps).toEqual([at('2026-03-01T10:00:00Z')]);
    expect(late.passed).toEqual([at('2026-03-01T08:00:00Z'), at('2026-03-01T09:00:00Z')]);
    const onTime = planDue(
      schedule({ catchUp: 'last' }),
      hourly,
      state('2026-03-01T07:00:00.000Z'),
      at('2026-03-01T10:00:10Z'),
    );
    expect(onTime).toMatchObject({
      onTime: at('2026-03-01T10:00:00Z'),
      catchUps: [],
      passedBecause: 'catchUp last, and a newer fire is due now',
    });
  });

  it('catchUp all fires the missed within the window, oldest first; jitter widens what counts as on time', () => {
    const plan = planDue(
      schedule({ catchUp: 'all', catchUpWindowMs: 2.5 * HOUR }),
      hourly,
      state('2026-03-01T06:00:00.000Z'),
      at('2026-03-01T10:05:00Z'),
    );
    expect(plan.catchUps).toEqual([8, 9, 10].map((hour) => at('2026-03-01T00:00:00Z') + hour * HOUR));
    expect(plan.passed).toEqual([at('2026-03-01T07:00:00Z')]);
    const jittered = planDue(
      schedule({ jitterMs: 10 * 60_000 }),
      hourly,
      state('2026-03-01T09:00:00.000Z'),
      at('2026-03-01T10:05:00Z'),
    );
    expect(jittered.onTime).toBe(at('2026-03-01T10:00:00Z'));
  });
});
