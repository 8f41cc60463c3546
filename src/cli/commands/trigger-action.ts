/** What `fleetbook schedules trigger` does (see schedules.ts), imported when the command runs. */
import { didYouMean, ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook, type ScheduleSpec } from '../../playbook/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { runLoaded, type RunCommandOptions } from './run-action.js';

export interface TriggerCommandOptions extends RunCommandOptions {
  schedule?: string;
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

/** `<playbook>#<id>` (a schedule's key, as the API and `fleetbook schedules` show it), else a playbook. */
function splitScheduleKey(reference: string, options: TriggerCommandOptions): { playbook: string; schedule?: string } {
  const at = reference.lastIndexOf('#');
  if (at <= 0)
    return { playbook: reference, ...(options.schedule === undefined ? {} : { schedule: options.schedule }) };
  if (options.schedule !== undefined)
    throw new UsageError(
      `'${reference}' names a schedule already; leave out --schedule ${options.schedule}`,
      'INVALID_OPTION',
    );
  return { playbook: reference.slice(0, at), schedule: reference.slice(at + 1) };
}

/**
 * Runs a schedule now, by hand: `<key>` (`<playbook>#<id>`) or a playbook and its schedule
 * (`--schedule`, or its only one). The run is admitted as every run is (windows and freezes of the
 * playbook and the schedule, inputs, the schedule's overlap policy against its previous run) and
 * recorded with `trigger: { kind: 'trigger', scheduleId, by }` (`by`: the operating-system user).
 * A disabled or paused schedule may be triggered: that is what a manual trigger is for.
 */
export async function triggerScheduleAction(
  io: CliIo,
  reference: string,
  options: TriggerCommandOptions,
): Promise<void> {
  const named = splitScheduleKey(reference, options);
  const loaded = loadPlaybook(resolvePlaybookRef(named.playbook, process.cwd()), playbookLoadOptions(io.env));
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    io.stderr.write(`${formatProblems(loaded.problems)}\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  const playbook = loaded.playbook;
  await runLoaded(io, playbook, options, { schedule: pickSchedule(playbook, named.schedule) });
}
