/**
 * Abort listeners kept in a set per signal, behind one listener of the signal's own.
 *
 * Node's `EventTarget` walks all of a signal's listeners on every add (to skip a duplicate) and
 * every remove. Thousands of waits share their run's signal, and each of them listens to it for
 * every sleep, every queued request and every request's timeout: each add and remove walked
 * thousands of listeners: a third of the CPU of 5,000 waits (benchmark 5). A set adds and removes
 * in constant time, and an entry costs a few words where a listener of Node's costs an object.
 */

/** Called once when the signal aborts: a function, or an object with `handleEvent` (as `EventTarget` takes). */
export type AbortListener = (() => void) | { handleEvent(): void };

const listenersBySignal = new WeakMap<AbortSignal, Set<AbortListener>>();

/**
 * Calls `listener` once when `signal` aborts. As with `addEventListener`, a signal that has already
 * aborted never calls it (check `signal.aborted` first), and adding the same listener twice
 * calls it once.
 */
export function onAbort(signal: AbortSignal, listener: AbortListener): void {
  let listeners = listenersBySignal.get(signal);
  if (!listeners) {
    const created = new Set<AbortListener>();
    signal.addEventListener('abort', () => notify(created), { once: true });
    listenersBySignal.set(signal, created);
    listeners = created;
  }
  listeners.add(listener);
}

/** Forgets `listener` (the work it guarded is over); nothing happens if it was not listening. */
export function offAbort(signal: AbortSignal, listener: AbortListener): void {
  listenersBySignal.get(signal)?.delete(listener);
}

/** How many listeners wait on `signal` through `onAbort` (for tests: none may outlive its work). */
export function abortListenerCount(signal: AbortSignal): number {
  return listenersBySignal.get(signal)?.size ?? 0;
}

/**
 * In the order they were added; one removed by an earlier one is not called. One that throws
 * does not keep the rest from being told: the first error is thrown once all have been, and
 * Node reports it as it reports any abort listener's (an uncaught exception).
 */
function notify(listeners: Set<AbortListener>): void {
  let failure: { error: unknown } | undefined;
  for (const listener of listeners) {
    listeners.delete(listener);
    try {
      if (typeof listener === 'function') listener();
      else listener.handleEvent();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
