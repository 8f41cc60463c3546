/** What `fleetbook schedules trigger` does (see schedules.ts), imported when the command runs. */
import { userInfo } from 'node:os';
import { didYouMean, ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook, type ScheduleSpec } from '../../playbook/index.js';
import { decideTrigger } from '../../scheduler/index.js';
import { withRunStore } from '../../store/index.js';
import { profileStore } from '../connection.js';
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

/**
 * Runs a schedule now, by hand: its inputs (under any `-i`), its overlap policy against its
 * previous run (`decideTrigger`), the playbook's lock (taken by the run), the run recorded with
 * `trigger: { kind: 'trigger', scheduleId, by }` (`by`: the operating-system user). A disabled or paused schedule may be triggered: that
 * is what a manual trigger is for.
 */
export async function triggerScheduleAction(
  io: CliIo,
  reference: string,
  options: TriggerCommandOptions,
): Promise<void> {
  const loaded = loadPlaybook(resolvePlaybookRef(reference, process.cwd()), playbookLoadOptions(io.env));
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    io.stderr.write(`${formatProblems(loaded.problems)}\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  const playbook = loaded.playbook;
  const schedule = pickSchedule(playbook, options.schedule);
  // Who pressed it, as the server records a token's name: the operating-system user here.
  const by = userInfo().username;
  const decision = await withRunStore({ env: io.env, store: profileStore(options.profile) }, (store) =>
    decideTrigger(store, schedule, by, Date.now()),
  );
  if (decision.action === 'queued') {
    io.stdout.write(
      `schedule ${schedule.key}: run ${decision.behind} still runs and its overlap policy is queue; the fire is queued behind it for the daemon\n`,
    );
    return;
  }
  if (decision.cancelled)
    io.stderr.write(
      `fleetbook: schedule ${schedule.key}: its previous run ${decision.cancelled} was cancelled (overlap: cancel-running)\n`,
    );
  await runLoaded(io, playbook, options, {
    inputs: schedule.inputs,
    trigger: { kind: 'trigger', scheduleId: schedule.key, by },
  });
}
