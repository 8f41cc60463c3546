/**
 * A signal that aborts when `parent` aborts (with the parent's reason) or when `timeoutMs`
 * passes (with `timeoutReason()`, else the default `AbortError`; of any length, see
 * setLongTimeout), made of one controller, one timer and one listener that `dispose` releases. `AbortSignal.any` with a timeout controller would make two more signals
 * per request, kept until a collection finds them: with thousands of waits polling, that
 * garbage is most of the memory peak.
 */
import { offAbort, onAbort } from './abort-listeners.js';
import { systemClock, type Clock } from './clock.js';

export interface LinkedSignal {
  signal: AbortSignal;
  /** The timeout fired (and the parent had not aborted before it). */
  timedOut(): boolean;
  /** Clears the timer and the parent listener; call it once the work is over. */
  dispose(): void;
}

export function linkSignal(
  parent: AbortSignal | undefined,
  timeoutMs: number,
  timeoutReason?: () => unknown,
  clock: Clock = systemClock,
): LinkedSignal {
  const controller = new AbortController();
  let timedOut = false;
  const forward = (): void => controller.abort(parent?.reason);
  // Chained when longer than one timer allows: a 30-day timeout must not fire at once.
  const timer = clock.setTimer(() => {
    timedOut = true;
    controller.abort(timeoutReason?.());
  }, timeoutMs);
  if (parent?.aborted) forward();
  else if (parent) onAbort(parent, forward);
  return {
    signal: controller.signal,
    timedOut: () => timedOut && !parent?.aborted,
    dispose: () => {
      timer.cancel();
      if (parent) offAbort(parent, forward);
    },
  };
}

/**
 * `work`'s outcome, or the abort's reason as soon as `signal` aborts: the caller stops waiting,
 * the work goes on (a fetch shared with other callers, a task that still holds its slot) and is
 * still observed, so its later failure is never unhandled.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const stop = (): void => reject(signal.reason as Error);
    if (signal.aborted) stop();
    else onAbort(signal, stop);
    work.then(
      (value) => {
        offAbort(signal, stop);
        resolve(value);
      },
      (error: unknown) => {
        offAbort(signal, stop);
        reject(error as Error);
      },
    );
  });
}
