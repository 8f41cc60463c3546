import { describe, expect, it } from 'vitest';
import { linkSignal } from './linked-signal.js';

describe('linkSignal', () => {
  it('aborts with the timeout reason after timeoutMs and says it timed out', async () => {
    const parent = new AbortController();
    const linked = linkSignal(parent.signal, 10, () => new Error('too slow'));
    await new Promise((resolve) => setTimeout(resolve, 30));
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
    const linked = linkSignal(parent.signal, 10);
    linked.dispose();
    parent.abort();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(linked.signal.aborted).toBe(false);
    expect(linked.timedOut()).toBe(false);
  });
});
