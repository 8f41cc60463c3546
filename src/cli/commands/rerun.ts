/**
 * `fleetbook rerun <runId> [--failed]`: a new run of a run's playbook with the same inputs (its
 * secret inputs given again); with `--failed`, what succeeded in that run is replayed from its
 * journal and only what failed or never started runs. Its options and help; the work is in
 * rerun-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { RerunCommandOptions } from './rerun-action.js';

export function registerRerunCommand(program: Command, io: CliIo): void {
  program
    .command('rerun')
    .description("run a run's playbook again with the same inputs; --failed: only what failed or never started")
    .argument('<runId>', 'the run (see `fleetbook runs list`)')
    .option('--failed', "replay what succeeded from the run's journal (nothing of it is sent again), run the rest")
    .option(
      '-i, --input <name=value>',
      'a secret input given again (repeatable); else FLEETBOOK_INPUT_<NAME>, else asked on a terminal',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--target <target>', "'simulator': run against the embedded simulator (a new world)")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option(
      '--ignore-window [reason]',
      "start outside the playbook's maintenance window or inside a freeze; recorded in the run with the reason",
    )
    .option(
      '-o, --output <format>',
      'text (readable log lines and a summary, the default on a terminal), json (JSON log lines, the default otherwise), yaml (the result; log lines on stderr), wide (= text)',
    )
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (runId: string, options: RerunCommandOptions) =>
      (await import('./rerun-action.js')).rerunAction(io, runId, options),
    );
}
