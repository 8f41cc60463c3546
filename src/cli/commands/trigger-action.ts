/** What `fleetbook schedules trigger` does (see schedules.ts), imported when the command runs. */
import { didYouMean, ExitCode, UsageError } from '../../errors/index.js';
import { existsSync } from 'node:fs';
import {
  hasErrors,
  loadPlaybook,
  loadPlaybookFolder,
  resolvePlaybookRef,
  type Playbook,
  type ScheduleSpec,
} from '../../playbook/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { runLoaded, type RunCommandOptions } from './run-action.js';

export interface TriggerCommandOptions extends RunCommandOptions {
  schedule?: string;
  /** Where a schedule's key is looked for. @default playbooks */
  playbooks?: string;
}

/** The schedule `id` names (its key or its `id`), or the playbook's only one. */
function pickSchedule(playbook: Playbook, id: string | undefined): ScheduleSpec {
  const { schedules } = playbook;
  const keys = schedules.map((schedule) => schedule.key);
  if (schedules.length === 0)
    throw new UsageError(`playbook ${playbook.name} has no schedule to trigger`, 'UNKNOWN_SCHEDULE');
  if (id === undefined) {
    const [only] = schedules;
    if (only && schedules.length === 1) return only;
    throw new UsageError(
      `playbook ${playbook.name} has ${schedules.length} schedules; name one with --schedule (${keys.join(', ')})`,
      'UNKNOWN_SCHEDULE',
    );
  }
  const found = schedules.find((schedule) => schedule.key === id || schedule.key === `${playbook.name}#${id}`);
  if (found) return found;
  throw new UsageError(
    `playbook ${playbook.name} has no schedule '${id}' (it has: ${keys.join(', ')}).${didYouMean(id, keys)}`,
    'UNKNOWN_SCHEDULE',
  );
}

/**
 * The playbook and schedule `reference` names: a playbook file or bundled name (its schedule by
 * `--schedule`, or its only one), else a schedule's key (as `fleetbook schedules` and the API
 * show it), looked for among the playbooks of `--playbooks`, as the daemon and the server find it.
 */
function findSchedule(
  io: CliIo,
  reference: string,
  options: TriggerCommandOptions,
): { playbook: Playbook; schedule: ScheduleSpec } | undefined {
  const loadOptions = playbookLoadOptions(io.env);
  const file = resolvePlaybookRef(reference, process.cwd());
  if (existsSync(file) || options.schedule !== undefined) {
    const loaded = loadPlaybook(file, loadOptions);
    if (!loaded.playbook || hasErrors(loaded.problems)) {
      io.stderr.write(`${formatProblems(loaded.problems)}\n`);
      io.exitCode = ExitCode.usage;
      return undefined;
    }
    return { playbook: loaded.playbook, schedule: pickSchedule(loaded.playbook, options.schedule) };
  }
  const folder = loadPlaybookFolder(options.playbooks ?? 'playbooks', loadOptions);
  const keys = folder.playbooks.flatMap((playbook) => playbook.schedules.map((schedule) => schedule.key));
  for (const playbook of folder.playbooks) {
    const schedule = playbook.schedules.find((candidate) => candidate.key === reference);
    if (schedule) return { playbook, schedule };
  }
  throw new UsageError(
    `'${reference}' is neither a playbook nor the key of a schedule in ${folder.dir} (${keys.length > 0 ? `keys: ${keys.join(', ')}` : 'it has no schedule'}).${didYouMean(reference, keys)}`,
    'UNKNOWN_SCHEDULE',
  );
}

/**
 * Runs a schedule now, by hand: its key, or a playbook and its schedule (`--schedule`, or its
 * only one). The run is admitted as every run is (windows and freezes of the
 * playbook and the schedule, inputs, the schedule's overlap policy against its previous run) and
 * recorded with `trigger: { kind: 'trigger', scheduleId, by }` (`by`: the operating-system user).
 * A disabled or paused schedule may be triggered: that is what a manual trigger is for.
 */
export async function triggerScheduleAction(
  io: CliIo,
  reference: string,
  options: TriggerCommandOptions,
): Promise<void> {
  const found = findSchedule(io, reference, options);
  if (found) await runLoaded(io, found.playbook, options, { schedule: found.schedule });
}
