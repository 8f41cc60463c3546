import { describe, expect, it } from 'vitest';
import { linkSignal } from './linked-signal.js';
import { createVirtualClock } from './virtual-clock.js';

/** Lets a virtual clock fire every timer due: each fires a macrotask after the last. */
const timersRun = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('linkSignal', () => {
  it('aborts with the timeout reason after timeoutMs and says it timed out', async () => {
    const parent = new AbortController();
    const clock = createVirtualClock();
    const linked = linkSignal(parent.signal, 10, () => new Error('too slow'), clock);
    expect(linked.signal.aborted).toBe(false);
    await timersRun();
    expect(clock.now()).toBe(10);
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('too slow');
    expect(linked.timedOut()).toBe(true);
    linked.dispose();
  });

  it('aborts with the parent reason, not as a timeout, and an aborted parent aborts at once', () => {
    const parent = new AbortController();
    const linked = linkSignal(parent.signal, 10_000);
    parent.abort(new Error('cancelled'));
    expect((linked.signal.reason as Error).message).toBe('cancelled');
    expect(linked.timedOut()).toBe(false);
    linked.dispose();
    const late = linkSignal(parent.signal, 10_000);
    expect(late.signal.aborted).toBe(true);
    late.dispose();
  });

  it('leaves nothing armed after dispose', async () => {
    const parent = new AbortController();
    const clock = createVirtualClock();
    const linked = linkSignal(parent.signal, 10, undefined, clock);
    linked.dispose();
    parent.abort();
    expect(clock.pending()).toBe(0);
    await timersRun();
    expect(linked.signal.aborted).toBe(false);
    expect(linked.timedOut()).toBe(false);
  });
});
