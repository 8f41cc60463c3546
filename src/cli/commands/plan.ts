/**
 * `fleetbook plan <playbook>`: a dry run that reads each resource a write would touch and says
 * what would change (plan-action.ts, imported when the command runs).
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { RunCommandOptions } from './run-action.js';

export function registerPlanCommand(program: Command, io: CliIo): void {
  program
    .command('plan')
    .description('show every change a playbook would make, read against live state; sends no write')
    .argument('<playbook>', 'playbook file or bundled name')
    .option(
      '-i, --input <name=value>',
      'an input (repeatable); non-string types are read as JSON',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--inputs <file>', 'YAML or JSON file of inputs (-i wins)')
    .option('--out <file>', 'also write the plan as JSON to this file (secret inputs left out)')
    .option('--target <target>', "'simulator': plan against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--world <file>', 'with --target simulator: its world file (YAML)')
    .option('--faults <file>', 'with --target simulator: its fault-injection file (YAML or JSON)')
    .option('--seed <n>', "with --target simulator: seed of its generated world (default: the world file's, else 1)")
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('-o, --output <format>', 'text (the plan, the default), json (the plan document)')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'warn')
    .action(async (reference: string, options: RunCommandOptions & { out?: string }) =>
      (await import('./run-action.js')).runAction(io, reference, {
        ...options,
        // The plan is the output: text unless asked for JSON, on a terminal or not.
        output: options.output ?? 'text',
        dryRun: true,
        plan: { ...(options.out === undefined ? {} : { out: options.out }) },
      }),
    );
}
