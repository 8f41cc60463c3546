/**
 * Pausing, resuming and triggering a schedule from the API or the pages. Pause and resume: only the fields changed are
 * written (`writeScheduleState`), so the scheduler writing its other fields meanwhile keeps
 * its writes. A schedule paused by hand stays paused until resumed by hand (a changed playbook
 * resumes only the pauses failed runs made).
 */
import type { Logger } from '../logging/index.js';
import type { Caller } from '../admission/index.js';
import { readScheduleState, writeScheduleState } from '../scheduler/index.js';
import type { RunRecord, RunStore } from '../store/index.js';
import { HttpError } from './app-error.js';
import { ServerErrorCode } from './error-codes.js';
import type { PlaybookCatalog } from './playbook-catalog.js';
import type { RunLauncher } from './run-launcher.js';
import { scheduleViews, type ScheduleView } from './views.js';

interface Deps {
  store: RunStore;
  catalog: PlaybookCatalog;
  logger: Logger;
}

async function playbookOf(catalog: PlaybookCatalog, key: string) {
  const playbook = (await catalog.current()).playbooks.find((candidate) =>
    candidate.schedules.some((s) => s.key === key),
  );
  if (!playbook) throw new HttpError(404, ServerErrorCode.notFound, `schedule ${key} not found`);
  return playbook;
}

async function viewOf(deps: Deps, key: string): Promise<ScheduleView> {
  const views = await scheduleViews(deps.store, [await playbookOf(deps.catalog, key)], 3, Date.now());
  const view = views.find((candidate) => candidate.key === key);
  if (!view) throw new HttpError(404, ServerErrorCode.notFound, `schedule ${key} not found`);
  return view;
}

export async function pauseSchedule(deps: Deps, key: string, by: string): Promise<ScheduleView> {
  await playbookOf(deps.catalog, key);
  const state = await readScheduleState(deps.store, key);
  if (!state?.paused) {
    const pause = { paused: true, pausedAt: new Date().toISOString(), pausedBy: by };
    if (state) {
      Object.assign(state, pause);
      // Paused by hand: a changed playbook does not resume it, as it resumes a pause of failed runs.
      delete state.pausedPlaybookHash;
      await writeScheduleState(deps.store, key, state);
    } else {
      // A schedule no daemon has seen yet gets only these fields; the scheduler fills in the rest.
      await deps.store.patchScheduleState(key, pause);
    }
    deps.logger.info({ event: 'audit.schedulePaused', scheduleKey: key, by }, `${by} paused schedule ${key}`);
  }
  return viewOf(deps, key);
}

export async function resumeSchedule(deps: Deps, key: string, by: string): Promise<ScheduleView> {
  await playbookOf(deps.catalog, key);
  const state = await readScheduleState(deps.store, key);
  if (state?.paused) {
    Object.assign(state, { paused: false, consecutiveFailures: 0 });
    delete state.pausedAt;
    delete state.pausedBy;
    delete state.pausedPlaybookHash;
    await writeScheduleState(deps.store, key, state);
    deps.logger.info({ event: 'audit.scheduleResumed', scheduleKey: key, by }, `${by} resumed schedule ${key}`);
  }
  return viewOf(deps, key);
}

/** What "trigger now" did: a run started (or queued for a worker), or the fire queued behind the previous run. */
export type TriggerOutcome =
  { outcome: 'started'; run: RunRecord; cancelled?: string } | { outcome: 'queued'; behind: string };

/**
 * Runs a schedule now, by hand, as `fleetbook schedules trigger` does: the request is admitted
 * as every run is (the windows and freezes of the playbook and the schedule, the inputs, the
 * overlap policy against its previous run: `skip` refuses with `SCHEDULE_BUSY` while it still
 * goes, `cancel-running` cancels it, `queue` leaves the fire to the scheduler), then the run with
 * the schedule's inputs under the playbook's lock (the launcher), recording the schedule and who
 * triggered it. A paused schedule may be triggered: that is what a manual trigger is for.
 */
export async function triggerSchedule(
  deps: Deps & { launcher: RunLauncher },
  key: string,
  caller: Caller,
  ignoreWindow?: { reason: string },
): Promise<TriggerOutcome> {
  const playbook = await playbookOf(deps.catalog, key);
  const schedule = playbook.schedules.find((candidate) => candidate.key === key);
  if (!schedule) throw new HttpError(404, ServerErrorCode.notFound, `schedule ${key} not found`);
  const by = caller.name;
  const { run, admission } = await deps.launcher.start(
    {
      playbook,
      inputs: schedule.inputs,
      trigger: { kind: 'trigger', schedule },
      dryRun: false,
      ...(ignoreWindow ? { ignoreWindow } : {}),
    },
    caller,
  );
  const audit = { event: 'audit.scheduleTriggered', scheduleKey: key, by };
  const overlap = admission.overlap;
  if (!run) {
    const behind = overlap && 'queuedBehind' in overlap ? overlap.queuedBehind : 'the previous run';
    deps.logger.info(
      { ...audit, queuedBehind: behind },
      `${by} triggered schedule ${key}: queued behind run ${behind} (overlap: queue)`,
    );
    return { outcome: 'queued', behind };
  }
  const cancelled = overlap && 'cancelled' in overlap ? overlap.cancelled : undefined;
  deps.logger.info(
    { ...audit, runId: run.id, ...(cancelled ? { cancelled } : {}) },
    `${by} triggered schedule ${key}: run ${run.id}${cancelled ? ` (run ${cancelled} cancelled, overlap: cancel-running)` : ''}`,
  );
  return { outcome: 'started', run, ...(cancelled ? { cancelled } : {}) };
}
