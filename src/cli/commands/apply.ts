/**
 * `fleetbook apply <plan.json>`: runs the planned playbook with the planned inputs, each write
 * checked against the plan before it is sent (apply-action.ts, imported when the command runs).
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { ApplyCommandOptions } from './apply-action.js';

export function registerApplyCommand(program: Command, io: CliIo): void {
  program
    .command('apply')
    .description(
      'run a saved plan (fleetbook plan --out): each write checked against the plan; a drifted resource stops it',
    )
    .argument('<plan>', 'the plan file')
    .option(
      '-i, --input <name=value>',
      "a secret input (repeatable): the plan keeps none; the other inputs are the plan's",
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--max-age <duration>', 'refuse a plan older than this (e.g. 2h, 30m)', '24h')
    .option('--target <target>', "'simulator': apply on the embedded simulator (a plan made there)")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--world <file>', 'with --target simulator: its world file (YAML)')
    .option('--seed <n>', "with --target simulator: seed of its generated world (default: the world file's, else 1)")
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('-o, --output <format>', 'text, json, yaml, wide (as fleetbook run)')
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (file: string, options: ApplyCommandOptions) =>
      (await import('./apply-action.js')).applyAction(io, file, options),
    );
}
