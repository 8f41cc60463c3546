import type { AsyncFaultSource } from './async-operations.js';
import type { AreaModule, ExtraRoute, OperationHandler, SimClock } from './context.js';
import { createAreaContext, createSimServices, type SimServices } from './services.js';
import type { ApiClient } from './world-file.js';

/** One built world: shared services, each area's state, and every handler by operation id. */
export interface World {
  services: SimServices;
  handlers: ReadonlyMap<string, OperationHandler>;
  /** Routes outside the description (e.g. report downloads), by name. */
  extraRoutes: ReadonlyMap<string, ExtraRoute>;
  /** Counts of every area (and the ids a client needs, such as the workspace id), for `/_sim/world`. */
  summary(): Record<string, Record<string, number | string>>;
  /** An API client an area holds (a workspace API credential), by client id. */
  apiClientOf(clientId: string): ApiClient | undefined;
}

export interface BuildWorldOptions {
  seed: number;
  clock: SimClock;
  faults?: AsyncFaultSource;
  /** World-file sections by area key. */
  sections: Record<string, unknown>;
}

/** Builds every area's state in list order from the seed; the same inputs give the same world. */
export function buildWorld(areas: readonly AreaModule[], options: BuildWorldOptions): World {
  const services = createSimServices({
    seed: options.seed,
    clock: options.clock,
    ...(options.faults ? { faults: options.faults } : {}),
  });
  const states = new Map<string, unknown>();
  const stateOf = <S>(key: string): S => {
    if (!states.has(key)) {
      throw new Error(
        `Area state '${key}' is not built (built so far: ${[...states.keys()].join(', ') || 'none'}); order areas/index.ts so it comes first`,
      );
    }
    return states.get(key) as S;
  };
  const handlers = new Map<string, OperationHandler>();
  const extraRoutes = new Map<string, ExtraRoute>();
  for (const area of areas) {
    const config = (options.sections[area.key] ?? {}) as Record<string, unknown>;
    const ctx = createAreaContext(services, area.key, config, stateOf);
    const state = area.createState(ctx);
    states.set(area.key, state);
    for (const [operationId, handler] of Object.entries(area.handlers(state, ctx))) {
      if (handlers.has(operationId))
        throw new Error(`Operation '${operationId}' is served by two areas (second: '${area.key}')`);
      handlers.set(operationId, handler);
    }
    for (const route of area.extraRoutes?.(state, ctx) ?? []) extraRoutes.set(route.name, route);
  }
  return {
    services,
    handlers,
    extraRoutes,
    summary: () => Object.fromEntries(areas.map((area) => [area.key, area.summary(states.get(area.key))])),
    apiClientOf: (clientId) => {
      for (const area of areas) {
        const client = area.apiClientOf?.(states.get(area.key), clientId);
        if (client) return client;
      }
      return undefined;
    },
  };
}
