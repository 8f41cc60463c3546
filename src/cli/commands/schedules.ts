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

export function registerSchedulesCommand(program: Command, io: CliIo): void {
  const schedules = program
    .command('schedules')
    .description('next fire times of schedules, their last run and result; resume a paused schedule');
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

  const resume = schedules
    .command('resume')
    .description('resume a schedule paused after failed runs (a running daemon picks it up at the next fire)')
    .argument('<key>', "the schedule's id (see fleetbook schedules)")
    .option('--playbooks <dir>', 'folder of playbooks, for suggestions when the key is unknown', 'playbooks');
  addOutputOptions(resume).action(async (key: string, options: { playbooks: string } & OutputOptions) =>
    (await import('./schedules-action.js')).resumeScheduleAction(io, key, options),
  );
}
