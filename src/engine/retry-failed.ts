/**
 * "Retry what failed": a new run of a run's playbook that replays from the old run's journal
 * every step and loop item that succeeded (their outputs read from it, no write sent again) and
 * runs the rest. The old journal's entries of what is replayed are copied into the new run's
 * journal before it starts, and the new run goes on from them as a resume goes on from its own
 * (`createResumePlan`, the runner's replay): one replay, and a new run whose journal tells all of
 * it (its page, `runs show`, a later resume of it).
 */
import { UsageError } from '../errors/index.js';
import type { Playbook } from '../playbook/index.js';
import {
  foldJournal,
  journalPages,
  JOURNAL_PAGE_SIZE,
  RunStatus,
  type JournalEntry,
  type JournalEvent,
  type RunRecord,
  type RunStore,
  type StepPath,
} from '../store/index.js';
import { EngineErrorCode } from './error-codes.js';
import { platformStateInFlight, replayedStatuses } from './resume-plan.js';

/** What a retry takes from the run it retries: its id and the journal events of what is replayed. */
export interface RetrySource {
  runId: string;
  events: readonly JournalEvent[];
}

/** The kind of an approval gate: never replayed, a retry's writes are decided again. */
const APPROVAL_KIND = 'approval';

/** `a[3].b` → `a[3]`, `a[3]` → `a`, `a` → undefined. */
function parentPath(path: StepPath): StepPath | undefined {
  return /^(.+?)(?:\.[^.[\]]+|\[\d+\])$/.exec(path)?.[1];
}

function* selfAndAncestors(path: StepPath): Iterable<StepPath> {
  for (let at: StepPath | undefined = path; at !== undefined; at = parentPath(at)) yield at;
}

/** The step or item an event is about (item events name the loop and the index). */
function subjectOf(event: JournalEvent): StepPath | undefined {
  switch (event.type) {
    case 'item.started':
    case 'item.finished':
      return `${event.path}[${event.index}]`;
    // The run's own events (waits, decisions, a cancellation) belong to the old run.
    case 'run.waiting':
    case 'approval.decided':
    case 'wait.ended':
    case 'run.cancelled':
      return undefined;
    default:
      return event.path;
  }
}

/**
 * The paths replayed whole: recorded succeeded (or skipped, simulated), except an approval gate
 * and what holds one (a block, a loop item): those run again, their own succeeded steps replayed
 * one by one, so the retry's writes wait for a decision of their own.
 */
function replayedPaths(entries: readonly JournalEntry[]): Set<StepPath> {
  const records = foldJournal(entries, { values: false });
  const holdsGate = new Set<StepPath>();
  for (const record of records)
    if (record.kind === APPROVAL_KIND) for (const path of selfAndAncestors(record.path)) holdsGate.add(path);
  return new Set(
    records
      .filter((record) => replayedStatuses.has(record.status) && !holdsGate.has(record.path))
      .map((record) => record.path),
  );
}

function checkRetriable(run: RunRecord, playbook: Playbook): void {
  if (run.status === RunStatus.running || run.status === RunStatus.queued || run.status === RunStatus.waiting)
    throw new UsageError(
      `run ${run.id} is ${run.status}: what failed is retried once it has ended (wait for it, or cancel it first)`,
      EngineErrorCode.runStillRunning,
    );
  if (run.status === RunStatus.succeeded)
    throw new UsageError(
      `run ${run.id} succeeded: nothing failed to retry (\`fleetbook rerun ${run.id}\` without --failed runs it again)`,
      EngineErrorCode.nothingFailed,
    );
  if (run.playbookHash !== playbook.hash)
    throw new UsageError(
      `the playbook ${playbook.name} changed since run ${run.id} started (its normalised hash differs): its journal cannot be replayed into the playbook as it is now. Run it again without --failed.`,
      EngineErrorCode.playbookChanged,
    );
}

/**
 * Checks that `run` can have what failed retried with `playbook` (ended, not succeeded, the same
 * playbook, no platform work left in flight) and reads what the retry replays from its journal.
 */
export async function retrySourceOf(store: RunStore, run: RunRecord, playbook: Playbook): Promise<RetrySource> {
  checkRetriable(run, playbook);
  const entries: JournalEntry[] = [];
  for await (const page of journalPages(store, run.id, JOURNAL_PAGE_SIZE)) entries.push(...page);
  const inFlight = platformStateInFlight(entries);
  if (inFlight.length > 0)
    throw new UsageError(
      `run ${run.id} stopped with platform work in flight (${inFlight.map((found) => `${found.path}: ${found.operationId}`).join('; ')}): a new run would not know of it. Resume it (\`fleetbook resume ${run.id}\`), which follows or reconciles that work.`,
      EngineErrorCode.retryInFlight,
    );
  const replayed = replayedPaths(entries);
  const events = entries
    .map((entry) => entry.event)
    .filter((event) => {
      const subject = subjectOf(event);
      if (subject === undefined) return false;
      for (const path of selfAndAncestors(subject)) if (replayed.has(path)) return true;
      return false;
    });
  return { runId: run.id, events };
}
