import { createAsyncOperations, type AsyncFaultSource } from './async-operations.js';
import type { AsyncOperations, Rng, SimClock, SimContext } from './context.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createRng } from './rng.js';

export interface SimServicesOptions {
  /** @default 1 */
  seed?: number;
  clock: SimClock;
  /** Fault injection for async operations; none when omitted. */
  faults?: AsyncFaultSource;
}

/** The services shared by every area of one world (rebuilt on reset; the clock is kept). */
export interface SimServices {
  rng: Rng;
  clock: SimClock;
  asyncOps: AsyncOperations;
  outbox: Outbox;
}

export function createSimServices(options: SimServicesOptions): SimServices {
  const rng = createRng(options.seed ?? 1);
  return {
    rng,
    clock: options.clock,
    // Forked sources: ids drawn by operations and mails never shift the world's sequence.
    asyncOps: createAsyncOperations(options.clock, rng.fork('async-operations'), options.faults),
    outbox: createOutbox(options.clock, rng.fork('outbox')),
  };
}

/**
 * The context one area receives. Its rng is forked by area key, so adding or resizing
 * one area never changes the world another generates from the same seed.
 */
export function createAreaContext(
  services: SimServices,
  areaKey: string,
  config: Record<string, unknown>,
  stateOf: <S>(areaKey: string) => S,
): SimContext {
  return {
    clock: services.clock,
    asyncOps: services.asyncOps,
    outbox: services.outbox.messages,
    sendMail: services.outbox.sendMail,
    rng: services.rng.fork(`area:${areaKey}`),
    config,
    stateOf,
  };
}
