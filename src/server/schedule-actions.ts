/**
 * Pausing and resuming a schedule from the API or the pages: only the fields changed are
 * written (`writeScheduleState`), so the scheduler writing its other fields meanwhile keeps
 * its writes. A schedule paused by hand stays paused until resumed by hand (a changed playbook
 * resumes only the pauses failed runs made).
 */
import type { Logger } from '../logging/index.js';
import { readScheduleState, writeScheduleState } from '../scheduler/index.js';
import type { RunStore } from '../store/index.js';
import { ApiError } from './app-error.js';
import { ServerErrorCode } from './error-codes.js';
import type { PlaybookCatalog } from './playbook-catalog.js';
import { scheduleViews, type ScheduleView } from './views.js';

interface Deps {
  store: RunStore;
  catalog: PlaybookCatalog;
  logger: Logger;
}

function playbookOf(catalog: PlaybookCatalog, key: string) {
  const playbook = catalog.current().playbooks.find((candidate) => candidate.schedules.some((s) => s.key === key));
  if (!playbook) throw new ApiError(404, ServerErrorCode.notFound, `schedule ${key} not found`);
  return playbook;
}

async function viewOf(deps: Deps, key: string): Promise<ScheduleView> {
  const views = await scheduleViews(deps.store, [playbookOf(deps.catalog, key)], 3, Date.now());
  const view = views.find((candidate) => candidate.key === key);
  if (!view) throw new ApiError(404, ServerErrorCode.notFound, `schedule ${key} not found`);
  return view;
}

export async function pauseSchedule(deps: Deps, key: string, by: string): Promise<ScheduleView> {
  playbookOf(deps.catalog, key);
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
  playbookOf(deps.catalog, key);
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
