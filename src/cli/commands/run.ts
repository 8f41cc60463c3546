/**
 * `fleetbook run <playbook|bundled-name>`: its options and help. The work (loader, engine,
 * connection) is in run-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { RunCommandOptions } from './run-action.js';

export function registerRunCommand(program: Command, io: CliIo): void {
  program
    .command('run')
    .description('run a playbook (a file, or the name of a bundled playbook)')
    .argument('<playbook>', 'playbook file or bundled name')
    .option(
      '-i, --input <name=value>',
      'an input (repeatable); non-string types are read as JSON',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--inputs <file>', 'YAML or JSON file of inputs (-i wins)')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option(
      '--world <file>',
      'with --target simulator: its world file (YAML): sizes, pinned failures, extra API clients',
    )
    .option('--faults <file>', 'with --target simulator: its fault-injection file (YAML or JSON)')
    .option('--seed <n>', "with --target simulator: seed of its generated world (default: the world file's, else 1)")
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('--dry-run', 'perform reads, print the writes instead of sending them')
    .option(
      '--ignore-window [reason]',
      "start (and keep starting loop items) outside the playbook's maintenance window or inside a freeze; recorded in the run with the reason",
    )
    .option('--queue', 'queue the run in the shared store (FLEETBOOK_STORE) for a `fleetbook worker` to run, and exit')
    .option(
      '-o, --output <format>',
      'text (readable log lines and a summary, the default on a terminal), json (JSON log lines, the default otherwise), yaml (the result; log lines on stderr), wide (= text)',
    )
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (reference: string, options: RunCommandOptions) =>
      (await import('./run-action.js')).runAction(io, reference, options),
    );
}
