/**
 * A simulated world saved and restored: what lets a rehearsal run end its process (at an
 * approval gate, on Ctrl-C) and be continued by another against the same world.
 *
 * An area's state holds closures (an async operation's completion, lazily generated
 * servers), so the world is not written out field by field: a snapshot keeps what built it
 * (seed, world file, faults) and every write its handlers served, each with the simulated
 * time it arrived at and the async faults it drew. Restoring builds the world from the seed
 * and serves those writes again at their times; areas draw their ids from seeded forks and
 * complete operations at their end times, so the world comes back the same: systems and
 * clusters at their versions, valid prechecks, operations with the same ids, running or
 * ended. The clock resumes at the simulated time of the save: a saved world's time stands still.
 */
import { withoutSecretKeys } from '../logging/index.js';
import type { AsyncFaultKind, AsyncFaultSource } from './async-operations.js';
import type { SimClock, SimRequest } from './context.js';
import type { FaultSettings } from './faults.js';
import type { RequestLogEntry } from './request-log.js';
import type { WorldFile } from './world-file.js';

/** The format a snapshot names, so a later layout can refuse (or convert) an older one. */
export const SNAPSHOT_FORMAT = 'fleetbook-simulator-world/1';

/** A write a handler served, as it is served again on restore (its origin is the restoring simulator's). */
export interface RecordedWrite {
  /** Simulated time the handler ran at, epoch ms. */
  atMs: number;
  request: Omit<SimRequest, 'origin' | 'headers'> & { headers: Record<string, string> };
}

/** A simulated world as `simulator.control.snapshot()` gives it and `startSimulator({ restore })` takes it. */
export interface SimulatorSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  seed: number;
  timeScale: number;
  /** Simulated time of the save, epoch ms: the restored clock starts there. */
  nowMs: number;
  /** The world file the world was built from (parsed), if any. */
  world?: WorldFile;
  /** Fault settings with the uses left of each counted rule. */
  faults: FaultSettings;
  writes: RecordedWrite[];
  /** What each async operation started drew from the async fault rules, in start order (`null`: none). */
  asyncFaults: Array<AsyncFaultKind | null>;
  /** `/_sim/requests` as it was: the restored simulator's log continues it. */
  requests: RequestLogEntry[];
}

/** Headers a handler reads (the bearer token is not one of them, and is never kept). */
const KEPT_HEADERS = ['content-type'];

/**
 * The writes of the current world and the async faults they drew, kept for a snapshot; while
 * a snapshot is replayed, the async faults come from it instead of the fault rules.
 */
export interface WriteHistory {
  record(request: SimRequest, atMs: number): void;
  /** The async fault source the world's operations draw from. */
  asyncFaults(live: AsyncFaultSource): AsyncFaultSource;
  /** Serve the recorded decisions (a replay) instead of drawing new ones, until `undefined`. */
  replayFaults(decisions: ReadonlyArray<AsyncFaultKind | null> | undefined): void;
  writes(): RecordedWrite[];
  faultsDrawn(): Array<AsyncFaultKind | null>;
  /** A reset world starts with no history. */
  clear(): void;
}

export function createWriteHistory(): WriteHistory {
  let writes: RecordedWrite[] = [];
  let drawn: Array<AsyncFaultKind | null> = [];
  let replaying: Array<AsyncFaultKind | null> | undefined;
  return {
    record(request, atMs) {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = request.headers[name];
        if (value !== undefined) headers[name] = value;
      }
      const { origin: _origin, headers: _headers, ...rest } = request;
      // A copy: a handler may keep (and later change) the body it was given.
      const copy = structuredClone({ ...rest, body: withoutSecretKeys(rest.body) });
      writes.push({ atMs, request: { ...copy, headers } });
    },
    asyncFaults: (live) => ({
      takeAsyncFault(type) {
        const decision = replaying ? (replaying.shift() ?? null) : (live.takeAsyncFault(type) ?? null);
        drawn.push(decision);
        return decision ?? undefined;
      },
    }),
    replayFaults(decisions) {
      replaying = decisions ? [...decisions] : undefined;
    },
    writes: () => writes,
    faultsDrawn: () => drawn,
    clear() {
      writes = [];
      drawn = [];
    },
  };
}

/** A clock that can be held at a past simulated time while recorded writes are served again. */
export interface ReplayClock extends SimClock {
  hold(atMs: number | undefined): void;
}

export function createReplayClock(live: SimClock): ReplayClock {
  let held: number | undefined;
  const now = (): number => held ?? live.now();
  return {
    now,
    nowIso: () => new Date(now()).toISOString(),
    wallNow: () => live.wallNow(),
    get timeScale() {
      return live.timeScale;
    },
    advance: (ms) => live.advance(ms),
    hold(atMs) {
      held = atMs;
    },
  };
}

/** Checks that `value` is a snapshot this version restores; the reason when not. */
export function snapshotProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return 'it is not a JSON object';
  const snapshot = value as Partial<SimulatorSnapshot>;
  if (snapshot.format !== SNAPSHOT_FORMAT)
    return `its format is ${JSON.stringify(snapshot.format)}, not '${SNAPSHOT_FORMAT}'`;
  const fields: Array<[keyof SimulatorSnapshot, boolean]> = [
    ['seed', Number.isInteger(snapshot.seed)],
    ['timeScale', typeof snapshot.timeScale === 'number' && snapshot.timeScale > 0],
    ['nowMs', Number.isFinite(snapshot.nowMs)],
    ['writes', Array.isArray(snapshot.writes)],
    ['asyncFaults', Array.isArray(snapshot.asyncFaults)],
    ['requests', Array.isArray(snapshot.requests)],
  ];
  const bad = fields.find(([, ok]) => !ok);
  return bad ? `its ${bad[0]} is missing or invalid` : undefined;
}

/** What a snapshot is taken of and restored into (the simulation's parts it touches). */
export interface SnapshotSource {
  seed: number;
  clock: ReplayClock;
  worldFile: WorldFile | undefined;
  history: WriteHistory;
  faults: { current(): FaultSettings };
  requestLog: { list(): RequestLogEntry[]; add(entry: RequestLogEntry): void };
  worlds: {
    current(): { services: { asyncOps: { settle(): void } } };
    handlerOf(operationId: string): ((req: SimRequest) => unknown) | undefined;
  };
}

/** The world as it is now, for `startSimulator({ restore })`: plain JSON. */
export function takeSnapshot(sim: SnapshotSource): SimulatorSnapshot {
  return {
    format: SNAPSHOT_FORMAT,
    seed: sim.seed,
    timeScale: sim.clock.timeScale,
    nowMs: sim.clock.now(),
    ...(sim.worldFile === undefined ? {} : { world: sim.worldFile }),
    faults: sim.faults.current(),
    writes: structuredClone(sim.history.writes()),
    asyncFaults: [...sim.history.faultsDrawn()],
    requests: sim.requestLog.list(),
  };
}

/**
 * Serves the snapshot's writes again, each at its simulated time and with the async faults it
 * drew, then lets the clock run from the save. A write that was refused then is refused again
 * (the same world answers the same): its answer is not needed, only its effect.
 */
export async function replaySnapshot(sim: SnapshotSource, snapshot: SimulatorSnapshot, origin: string): Promise<void> {
  sim.history.replayFaults(snapshot.asyncFaults);
  try {
    for (const write of snapshot.writes) {
      sim.clock.hold(write.atMs);
      sim.worlds.current().services.asyncOps.settle();
      const handler = sim.worlds.handlerOf(write.request.operationId);
      if (!handler) continue;
      const request: SimRequest = { ...structuredClone(write.request), origin };
      sim.history.record(request, write.atMs);
      try {
        await handler(request);
      } catch {
        // Refused then too.
      }
    }
  } finally {
    sim.clock.hold(undefined);
    sim.history.replayFaults(undefined);
  }
  for (const entry of snapshot.requests) sim.requestLog.add(entry);
}
