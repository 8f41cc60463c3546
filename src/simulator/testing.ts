import type { AsyncFaultSource } from './async-operations.js';
import { createSimClock } from './clock.js';
import type { SimContext, SimRequest } from './context.js';
import { createAreaContext, createSimServices } from './services.js';

export interface TestContextOptions {
  /** @default 1 */
  seed?: number;
  /** @default 1 */
  timeScale?: number;
  /** Simulated start time, epoch ms. @default Date.now() */
  startMs?: number;
  /**
   * The area the context is for: its rng is forked by this key exactly as the server
   * does, so a test sees the same world the server would build from the same seed.
   * @default 'test'
   */
  areaKey?: string;
  /** The area's world-file section. @default {} */
  config?: Record<string, unknown>;
  /** Other areas' states, returned by `stateOf(key)`. @default {} */
  states?: Record<string, unknown>;
  /** Async-operation fault injection. @default none */
  faults?: AsyncFaultSource;
}

export interface TestContext extends SimContext {
  /** Moves simulated time forward, then settles due async operations (as the server does before a handler). */
  advance(ms: number): void;
  /** A request with neutral defaults (GET, admin client, no region) overridden by `init`. */
  request(operationId: string, init?: Partial<Omit<SimRequest, 'operationId'>>): SimRequest;
}

/**
 * A real `SimContext` (seeded rng, simulated clock, async-operation registry, outbox)
 * for unit tests of area handlers without HTTP.
 */
export function createTestContext(options: TestContextOptions = {}): TestContext {
  const clock = createSimClock({
    ...(options.timeScale === undefined ? {} : { timeScale: options.timeScale }),
    ...(options.startMs === undefined ? {} : { startMs: options.startMs }),
  });
  const services = createSimServices({
    clock,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.faults ? { faults: options.faults } : {}),
  });
  const states = options.states ?? {};
  const ctx = createAreaContext(services, options.areaKey ?? 'test', options.config ?? {}, <S>(key: string): S => {
    if (!(key in states)) {
      throw new Error(
        `No state for area '${key}' in this test context (given: ${Object.keys(states).join(', ') || 'none'})`,
      );
    }
    return states[key] as S;
  });
  return {
    ...ctx,
    advance(ms) {
      clock.advance(ms);
      services.asyncOps.settle();
    },
    request: (operationId, init = {}) => ({
      operationId,
      method: 'GET',
      params: {},
      query: {},
      body: undefined,
      headers: {},
      region: '',
      clientId: 'sim-admin',
      origin: 'http://127.0.0.1:0',
      ...init,
    }),
  };
}
