import { describe, expect, it } from 'vitest';
import { asyncStateOf, createAsyncOperations, type AsyncFaultKind } from './async-operations.js';
import { createSimClock } from './clock.js';
import { createRng } from './rng.js';

const MINUTE = 60_000;

function setup(faults?: Record<string, AsyncFaultKind>) {
  const clock = createSimClock({ startMs: 0, timeScale: 1e-9 });
  const ops = createAsyncOperations(clock, createRng(1), faults && { takeAsyncFault: (type) => faults[type] });
  return { clock, ops };
}

describe('createAsyncOperations', () => {
  it('derives state and progress from the clock and completes when due', () => {
    const { clock, ops } = setup();
    let calls = 0;
    const record = ops.start({
      flavour: 'dataServices',
      type: 'software-update',
      resourceId: 'sys-1',
      durationMs: 10 * MINUTE,
      complete: () => {
        calls += 1;
        return { status: 'SUCCEEDED' };
      },
    });
    expect(ops.locationOf(record)).toBe(`/data-services/v1beta1/async-operations/${record.id}`);
    expect(asyncStateOf(record, clock.now())).toEqual({ state: 'INITIALIZED', progressPercent: 0 });
    clock.advance(5 * MINUTE);
    ops.settle();
    expect(asyncStateOf(record, clock.now())).toEqual({ state: 'RUNNING', progressPercent: 50 });
    expect(ops.running('sys-1').map((r) => r.id)).toEqual([record.id]);
    clock.advance(5 * MINUTE);
    ops.settle();
    ops.settle();
    expect(calls).toBe(1);
    expect(asyncStateOf(record, clock.now())).toEqual({ state: 'SUCCEEDED', progressPercent: 100 });
    expect(record.endedAt).toBe(10 * MINUTE);
    expect(ops.running('sys-1')).toEqual([]);
  });

  it('runs completions in end-time order, start order on ties', () => {
    const { clock, ops } = setup();
    const order: string[] = [];
    for (const [name, minutes] of [
      ['c', 3],
      ['a', 1],
      ['b', 2],
      ['b2', 2],
    ] as const) {
      ops.start({
        flavour: 'devices',
        type: name,
        durationMs: minutes * MINUTE,
        complete: () => (order.push(name), { status: 'SUCCEEDED' }),
      });
    }
    clock.advance(10 * MINUTE);
    ops.settle();
    expect(order).toEqual(['a', 'b', 'b2', 'c']);
  });

  it('forgets finished device and subscription operations a day after they end, not data-services ones', () => {
    const { clock, ops } = setup();
    const device = ops.start({
      flavour: 'devices',
      type: 'add',
      durationMs: MINUTE,
      complete: () => ({ status: 'SUCCEEDED' }),
    });
    const data = ops.start({
      flavour: 'dataServices',
      type: 'x',
      durationMs: MINUTE,
      complete: () => ({ status: 'SUCCEEDED' }),
    });
    clock.advance(MINUTE);
    ops.settle();
    clock.advance(24 * 60 * MINUTE - 1);
    expect(ops.get(device.id)).toBe(device);
    clock.advance(1);
    expect(ops.get(device.id)).toBeUndefined();
    expect(ops.get(data.id)).toBe(data);
  });

  it('applies injected faults: a forced failure reaches complete(), a stuck operation never ends', () => {
    const { clock, ops } = setup({ 'software-update': 'FAILED', 'policy-delete': 'never' });
    let injected: unknown;
    const failed = ops.start({
      flavour: 'dataServices',
      type: 'software-update',
      resourceId: 'sys',
      durationMs: MINUTE,
      complete: (failure) => ((injected = failure), { status: 'SUCCEEDED' }),
    });
    const stuck = ops.start({
      flavour: 'dataServices',
      type: 'policy-delete',
      resourceId: 'p',
      durationMs: MINUTE,
      complete: () => ({ status: 'SUCCEEDED' }),
    });
    clock.advance(60 * MINUTE);
    ops.settle();
    expect(injected).toMatchObject({ errorCode: 'SIMULATED_FAILURE' });
    expect(failed.outcome).toMatchObject({ status: 'FAILED', error: { errorCode: 'SIMULATED_FAILURE' } });
    expect(stuck.stuck).toBe(true);
    expect(asyncStateOf(stuck, clock.now())).toEqual({ state: 'RUNNING', progressPercent: 99 });
    expect(ops.running('p')).toHaveLength(1);
  });

  it('ends a TIMEDOUT fault at its timeoutMinutes, RUNNING until then, the area told as for a failure', () => {
    const { clock, ops } = setup({ 'software-update': 'TIMEDOUT' });
    let injected: unknown;
    const record = ops.start({
      flavour: 'dataServices',
      type: 'software-update',
      resourceId: 'sys',
      durationMs: 45 * MINUTE,
      complete: (failure) => ((injected = failure), { status: 'SUCCEEDED' }),
    });
    expect(record.timeoutMinutes).toBe(90);
    clock.advance(89 * MINUTE);
    ops.settle();
    expect(asyncStateOf(record, clock.now()).state).toBe('RUNNING');
    expect(ops.running('sys')).toHaveLength(1);
    clock.advance(MINUTE);
    ops.settle();
    expect(injected).toMatchObject({ errorCode: 'OPERATION_TIMED_OUT' });
    expect(record.outcome).toMatchObject({ status: 'TIMEDOUT', error: { errorCode: 'OPERATION_TIMED_OUT' } });
    expect(asyncStateOf(record, clock.now()).state).toBe('TIMEDOUT');
    expect(ops.running('sys')).toEqual([]);
  });

  it('records a completion that throws as FAILED and keeps settling', () => {
    const { clock, ops } = setup();
    const bad = ops.start({
      flavour: 'reporting',
      type: 'x',
      durationMs: 1,
      complete: () => {
        throw new Error('boom');
      },
    });
    const good = ops.start({
      flavour: 'reporting',
      type: 'y',
      durationMs: 2,
      complete: () => ({ status: 'SUCCEEDED' }),
    });
    clock.advance(5);
    ops.settle();
    expect(bad.outcome).toMatchObject({ status: 'FAILED', error: { message: 'boom' } });
    expect(good.outcome?.status).toBe('SUCCEEDED');
  });
});
