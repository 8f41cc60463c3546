/**
 * The world of a rehearsal run, kept beside the run: a run on the embedded simulator
 * (`--target simulator`) ends its process at an approval gate, on Ctrl-C or at its end, and
 * takes its simulator with it. Its world (systems, prechecks, operations, the request log)
 * is saved to `<FLEETBOOK_HOME>/worlds/<runId>.json` then, so `approve`, `deny` and `resume`
 * of the run continue against the same world in a new embedded simulator, and save it again.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import { snapshotProblem, type SimulatorSnapshot } from '../simulator/index.js';
import { resolveFleetbookHome, worldsDirOf } from '../store/index.js';

/** Where the world of run `runId` is kept: `<FLEETBOOK_HOME>/worlds/<runId>.json`. */
export function savedWorldPath(env: NodeJS.ProcessEnv, runId: string): string {
  // Run ids are UUIDs; anything else would name a file outside the folder.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runId)) throw new Error(`not a run id: ${JSON.stringify(runId)}`);
  return join(worldsDirOf(resolveFleetbookHome({ env })), `${runId}.json`);
}

/** The saved world of run `runId`, or undefined when it has none (it did not run on the embedded simulator). */
export function readSavedWorld(env: NodeJS.ProcessEnv, runId: string): SimulatorSnapshot | undefined {
  const path = savedWorldPath(env, runId);
  if (!existsSync(path)) return undefined;
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `${path}: the saved world of run ${runId} cannot be read (${(error as Error).message}). Delete it to continue the run against a new world.`,
      'INVALID_SAVED_WORLD',
    );
  }
  const problem = snapshotProblem(snapshot);
  if (problem)
    throw new UsageError(
      `${path}: the saved world of run ${runId} cannot be restored: ${problem}. Delete it to continue the run against a new world.`,
      'INVALID_SAVED_WORLD',
    );
  return snapshot as SimulatorSnapshot;
}

/**
 * Writes the world of run `runId`, whole or not at all (a temp file renamed over the old one).
 * The run's secrets (a secret input sent in a body) are scrubbed out, as from its logs.
 */
export function saveWorld(
  env: NodeJS.ProcessEnv,
  runId: string,
  snapshot: SimulatorSnapshot,
  secrets: SecretRegistry,
): string {
  const path = savedWorldPath(env, runId);
  mkdirSync(worldsDirOf(resolveFleetbookHome({ env })), { recursive: true });
  // The world file's clients (their secrets are the rehearsal's own) stay as they are: the restored simulator needs them.
  const kept: SimulatorSnapshot = {
    ...snapshot,
    writes: secrets.scrubValue(snapshot.writes),
    requests: secrets.scrubValue(snapshot.requests),
  };
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(kept)}\n`, { mode: 0o600 });
  renameSync(temp, path);
  rmSync(inUsePath(path), { force: true });
  return path;
}

/** Where a world restored into a running process waits: `<runId>.in-use.json`. */
function inUsePath(path: string): string {
  return path.replace(/\.json$/, '.in-use.json');
}

/**
 * Moves the saved world of run `runId` aside while a process continues the run on it: a process
 * killed before it saves the world again leaves no saved world (a stale one would not know the
 * operations it started), so the next resume is refused as any new simulator's would be
 * (`SIMULATOR_STATE_LOST`) when work was in flight. The old file stays as `<runId>.in-use.json`.
 */
export function takeSavedWorld(env: NodeJS.ProcessEnv, runId: string): void {
  const path = savedWorldPath(env, runId);
  if (existsSync(path)) renameSync(path, inUsePath(path));
}

/**
 * What a resume (`resume`, `approve`, `deny`) of run `runId` connects to: its saved world when
 * it has one. A run rehearsed on the embedded simulator continues there whatever the FLEETBOOK_*
 * variables name (its operations are the simulator's); `--target` other than `simulator` is
 * left to `openConnection` to refuse.
 */
export function connectionForResume(
  env: NodeJS.ProcessEnv,
  runId: string,
  target: string | undefined,
): { target: string | undefined; restore?: SimulatorSnapshot } {
  if (target !== undefined && target !== 'simulator') return { target };
  const restore = readSavedWorld(env, runId);
  return restore ? { target: 'simulator', restore } : { target };
}

/**
 * Saves the embedded simulator's world beside run `runId` once the run ended or stopped
 * waiting; nothing for a platform connection. A world that cannot be written is said, not
 * thrown: the run's own result stands.
 */
export function keepWorld(
  env: NodeJS.ProcessEnv,
  runId: string,
  connection: { snapshot?: () => SimulatorSnapshot },
  secrets: SecretRegistry,
  logger: Logger,
): void {
  if (!connection.snapshot) return;
  try {
    const path = saveWorld(env, runId, connection.snapshot(), secrets);
    logger.debug({ event: 'world.saved', runId, path }, `the simulator's world of run ${runId} is kept in ${path}`);
  } catch (error) {
    logger.warn(
      { event: 'world.notSaved', runId, error: (error as Error).message },
      `the simulator's world of run ${runId} could not be saved (${(error as Error).message}): a resume starts from a new world`,
    );
  }
}
