/**
 * `fleetbook schedules [playbook...]`: for each schedule, its next fire times in its
 * timezone and in UTC, and what the store remembers (last fire, last run and its result,
 * paused). Without files, the playbooks of `--playbooks` (the daemon's folder).
 * `fleetbook schedules resume <key>` resumes a schedule paused after failed runs.
 * Its options and help; the work is in schedules-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { guardDefaultSubcommand } from '../subcommand-typos.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';
import type { TriggerCommandOptions } from './trigger-action.js';

export function registerSchedulesCommand(program: Command, io: CliIo): void {
  const schedules = program
    .command('schedules')
    .description('next fire times of schedules, their last run and result; trigger one now; resume a paused schedule');
  guardDefaultSubcommand(schedules, { takesOperands: true });

  const list = schedules
    .command('list', { isDefault: true })
    .description('each schedule: its next fire times in its timezone and in UTC, its last run and result')
    .argument('[playbook...]', 'playbook files or bundled names (default: the playbooks of --playbooks)')
    .option('--playbooks <dir>', 'folder of playbooks, when no playbook is named', 'playbooks')
    .option('--count <n>', 'how many next fire times', '5');
  addOutputOptions(list).action(
    async (files: string[], options: { playbooks: string; count: string } & OutputOptions) =>
      (await import('./schedules-action.js')).listSchedulesAction(io, files, options),
  );

  const trigger = schedules
    .command('trigger')
    .description(
      "run a schedule now with its inputs: its overlap policy against its previous run, the playbook's lock; recorded as a trigger of the schedule",
    )
    .argument(
      '<key|playbook>',
      "the schedule's key (<playbook>#<id>, as `fleetbook schedules` shows it), or a playbook file or bundled name",
    )
    .option('--schedule <id>', 'the schedule (its id, or its position: 0, 1...) when the playbook has several')
    .option('--playbooks <dir>', "folder where a schedule's key is looked for (the daemon's)", 'playbooks')
    .option(
      '-i, --input <name=value>',
      "an input over the schedule's (repeatable); non-string types are read as JSON",
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('--dry-run', 'perform reads, print the writes instead of sending them')
    .option(
      '--ignore-window [reason]',
      'start though the maintenance window is closed or a freeze holds; recorded in the run with the reason',
    )
    .option('--queue', 'queue the run in the shared store for a `fleetbook worker` to run, and exit')
    .option('-o, --output <format>', 'text, json, yaml or wide: as `fleetbook run`')
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', 'as `fleetbook run`', 'info');
  trigger.action(async (reference: string, options: TriggerCommandOptions) =>
    (await import('./trigger-action.js')).triggerScheduleAction(io, reference, options),
  );

  const resume = schedules
    .command('resume')
    .description('resume a schedule paused after failed runs (a running daemon picks it up at the next fire)')
    .argument('<key>', "the schedule's id (see fleetbook schedules)")
    .option('--playbooks <dir>', 'folder of playbooks, for suggestions when the key is unknown', 'playbooks');
  addOutputOptions(resume).action(async (key: string, options: { playbooks: string } & OutputOptions) =>
    (await import('./schedules-action.js')).resumeScheduleAction(io, key, options),
  );
}
