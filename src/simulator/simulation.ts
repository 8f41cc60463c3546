import { UsageError } from '../errors/index.js';
import { loadPlatformDescription, type PlatformDescription } from '../openapi/index.js';
import { areaModules } from './areas/index.js';
import { createAsyncViews } from './async-views.js';
import { createAuth, type Auth } from './auth.js';
import { createSimClock } from './clock.js';
import type { AreaModule, OperationHandler, SimClock } from './context.js';
import { createFaults, loadFaultSettings, type Faults, type FaultSettings } from './faults.js';
import { createRateLimits, type RateLimits } from './rate-limits.js';
import { createRequestLog, type RequestLog } from './request-log.js';
import type { ResponseViolation } from './response-check.js';
import { buildWorld, type World } from './world.js';
import { loadWorldFile, type ApiClient, type WorldFile } from './world-file.js';
import {
  createReplayClock,
  createWriteHistory,
  snapshotProblem,
  type ReplayClock,
  type SimulatorSnapshot,
  type WriteHistory,
} from './world-snapshot.js';

export interface SimulatorOptions {
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Seed of the generated world. @default the world file's seed, else 1 */
  seed?: number;
  /** World file: YAML path or the parsed object. @default the default world */
  world?: string | object;
  /** Simulated milliseconds per real millisecond. @default 1 */
  timeScale?: number;
  /** Fault settings: YAML/JSON path or object. @default none */
  faults?: string | FaultSettings;
  /** Validate every JSON response against the description (500 `SIMULATOR_RESPONSE_INVALID` on drift). @default false */
  validateResponses?: boolean;
  /** Multiplies every published per-minute rate limit. @default the world file's `rateLimitScale`, else 1 */
  rateLimitScale?: number;
  /** Per-minute limits by rate-limit group, overriding the published ones and the world file's. @default the world file's `rateLimits` */
  rateLimits?: Record<string, number>;
  /** Lifetime of issued tokens, in wall-clock seconds (plus `/_sim/clock` advances). @default the world file's `tokenLifetimeSeconds`, else 7199 */
  tokenLifetimeSeconds?: number;
  /** Fastify's own request logging. @default false */
  logger?: boolean;
  /**
   * A saved world (`simulator.control.snapshot()`) to continue: its seed, world file, faults,
   * writes and request log; `seed`, `world` and `faults` are not taken with it. `timeScale`
   * defaults to the snapshot's.
   */
  restore?: SimulatorSnapshot;
}

export const DEFAULT_CLIENTS: readonly ApiClient[] = [
  { clientId: 'sim-admin', clientSecret: 'sim-admin-secret', role: 'Administrator' },
  { clientId: 'sim-operator', clientSecret: 'sim-operator-secret', role: 'Operator' },
  { clientId: 'sim-observer', clientSecret: 'sim-observer-secret', role: 'Observer' },
];

function mergeClients(extra: readonly ApiClient[]): ApiClient[] {
  const byId = new Map(DEFAULT_CLIENTS.map((client) => [client.clientId, client]));
  for (const client of extra) byId.set(client.clientId, client);
  return [...byId.values()];
}

/** The world of the simulation; `POST /_sim/reset` rebuilds it from the seed. */
export interface Worlds {
  current(): World;
  rebuild(): void;
  /** The handler of an operation: an async-operation view, else the current world's area handler. */
  handlerOf(operationId: string): OperationHandler | undefined;
}

/** Everything the simulated platform keeps between requests, built from the options and the world file. */
export interface Simulation {
  description: PlatformDescription;
  seed: number;
  clients: ApiClient[];
  clock: ReplayClock;
  /** The world file the world was built from, parsed (a snapshot keeps it). */
  worldFile: WorldFile | undefined;
  /** The writes served since the world was built, for a snapshot. */
  history: WriteHistory;
  auth: Auth;
  faults: Faults;
  rateLimits: RateLimits;
  requestLog: RequestLog;
  worlds: Worlds;
  /** Answers that did not match the description (`validateResponses`). */
  violations: ResponseViolation[];
  validateResponses: boolean;
}

function createWorlds(build: () => World, clock: SimClock, history: WriteHistory): Worlds {
  let world = build();
  const asyncViews = createAsyncViews(() => world.services.asyncOps, clock);
  return {
    current: () => world,
    rebuild() {
      history.clear();
      world = build();
    },
    handlerOf: (operationId) => asyncViews[operationId] ?? world.handlers.get(operationId),
  };
}

export function createSimulation(options: SimulatorOptions): Simulation {
  const description = loadPlatformDescription();
  const areas: readonly AreaModule[] = areaModules;
  const rateLimitGroups = [
    ...new Set(description.operations.flatMap((op) => (op.rateLimit ? [op.rateLimit.group] : []))),
  ];
  const { restore } = options;
  const problem = restore === undefined ? undefined : snapshotProblem(restore);
  if (problem) throw new UsageError(`The saved world cannot be restored: ${problem}.`, 'INVALID_SAVED_WORLD');
  const worldSource = restore ? restore.world : options.world;
  const loadedWorld = worldSource === undefined ? undefined : loadWorldFile(worldSource, areas, rateLimitGroups);
  const worldFile = loadedWorld ?? {};
  const seed = restore?.seed ?? options.seed ?? worldFile.seed ?? 1;
  const clients = mergeClients(worldFile.clients ?? []);
  // A restored world's time goes on from its save (its writes are served again at their own times first).
  const clock = createReplayClock(
    createSimClock({
      timeScale: options.timeScale ?? restore?.timeScale ?? 1,
      ...(restore ? { startMs: restore.nowMs } : {}),
    }),
  );
  const history = createWriteHistory();
  // Workspace API credentials live in the world, which is built below (and rebuilt on reset).
  const auth: Auth = createAuth(
    clients,
    clock,
    options.tokenLifetimeSeconds ?? worldFile.tokenLifetimeSeconds ?? 7199,
    (clientId) => worlds.current().apiClientOf(clientId),
  );
  const faults = createFaults(seed, () => auth.revokeAll());
  const faultSettings = restore ? restore.faults : options.faults;
  if (faultSettings !== undefined) faults.set(loadFaultSettings(faultSettings));
  const rateLimits = createRateLimits({
    scale: options.rateLimitScale ?? worldFile.rateLimitScale ?? 1,
    overrides: { ...worldFile.rateLimits, ...options.rateLimits },
  });
  const asyncFaults = history.asyncFaults(faults);
  const worlds = createWorlds(
    () => buildWorld(areas, { seed, clock, faults: asyncFaults, sections: worldFile }),
    clock,
    history,
  );
  return {
    description,
    seed,
    clients,
    clock,
    worldFile: loadedWorld,
    history,
    auth,
    faults,
    rateLimits,
    requestLog: createRequestLog(),
    worlds,
    violations: [],
    validateResponses: options.validateResponses ?? false,
  };
}
