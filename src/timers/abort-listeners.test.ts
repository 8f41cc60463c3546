import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { offAbort, onAbort } from './abort-listeners.js';
import { linkSignal, untilAborted } from './linked-signal.js';
import { sleep } from './sleep.js';

describe('abort listeners', () => {
  it('keep one listener on the signal however many sleeps, timeouts and waits listen to it', async () => {
    const run = new AbortController();
    const naps = Array.from({ length: 1_000 }, () => sleep(60_000, run.signal));
    const links = Array.from({ length: 1_000 }, () => linkSignal(run.signal, 60_000));
    const waits = Array.from({ length: 1_000 }, () => untilAborted(new Promise(() => {}), run.signal));
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);

    run.abort(new Error('stopped'));
    const outcomes = await Promise.allSettled([...naps, ...waits]);
    expect(outcomes.every((outcome) => outcome.status === 'rejected' && outcome.reason.message === 'stopped')).toBe(
      true,
    );
    expect(links.every((link) => link.signal.aborted && (link.signal.reason as Error).message === 'stopped')).toBe(
      true,
    );
  });

  it('call each listener once, in the order added, and skip those removed before their turn', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const second = (): void => {
      calls.push('second');
    };
    const first = (): void => {
      calls.push('first');
      offAbort(controller.signal, third);
    };
    const third = { handleEvent: () => calls.push('third') };
    const removed = (): void => {
      calls.push('removed');
    };
    onAbort(controller.signal, first);
    onAbort(controller.signal, second);
    onAbort(controller.signal, second);
    onAbort(controller.signal, third);
    onAbort(controller.signal, removed);
    offAbort(controller.signal, removed);
    offAbort(new AbortController().signal, removed);

    controller.abort();
    controller.abort();
    expect(calls).toEqual(['first', 'second']);
  });

  describe('when a listener throws', () => {
    const vitestHandlers = process.listeners('uncaughtException');
    afterEach(() => {
      process.removeAllListeners('uncaughtException');
      for (const handler of vitestHandlers) process.on('uncaughtException', handler);
    });

    it('still tell the others, and the error is reported as uncaught', async () => {
      process.removeAllListeners('uncaughtException');
      const uncaught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
      const controller = new AbortController();
      const told: number[] = [];
      onAbort(controller.signal, () => told.push(1));
      onAbort(controller.signal, () => {
        throw new Error('listener failed');
      });
      onAbort(controller.signal, () => told.push(3));

      controller.abort();
      expect(told).toEqual([1, 3]);
      expect(((await uncaught) as Error).message).toBe('listener failed');
    });
  });
});
