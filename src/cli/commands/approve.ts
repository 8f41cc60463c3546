/**
 * `fleetbook approve <runId>` and `fleetbook deny <runId>`: decide the approval gate a run waits
 * at (see docs/approvals.md). The decision (who: the OS user; when; the comment; the form's
 * values) is journaled, then the run goes on: resumed in this process with a local store, queued
 * for a worker with a shared one. Refusals (not waiting, decided already, another gate, not an
 * approver, invalid inputs) exit 2. Its options and help; the work is in approve-action.ts.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { DecideCommandOptions } from './approve-action.js';

function decisionCommand(program: Command, name: 'approve' | 'deny', description: string): Command {
  const command = program
    .command(name)
    .description(description)
    .argument('<runId>', 'the waiting run (see `fleetbook runs list --status waiting`)')
    .option('--step <id>', 'the gate (its id or path): refused unless it is the one the run waits at');
  if (name === 'approve')
    command.option(
      '-i, --input <name=value>',
      "a value of the gate's form (repeatable); non-string types are read as JSON",
      (value: string, previous: string[]) => [...previous, value],
      [],
    );
  return command
    .option('--target <target>', "'simulator': continue the run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('-o, --output <format>', 'text, json, yaml or wide: as `fleetbook resume`')
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info');
}

export function registerApproveCommands(program: Command, io: CliIo): void {
  decisionCommand(program, 'approve', 'approve the gate a waiting run waits at; the run goes on')
    .option('--comment <text>', 'why (kept in the journal)')
    .action(async (runId: string, options: DecideCommandOptions) =>
      (await import('./approve-action.js')).decideAction(io, runId, 'approved', options),
    );
  decisionCommand(program, 'deny', 'deny the gate a waiting run waits at; the gate fails with the comment')
    .requiredOption('--comment <text>', 'why (the gate fails with it; kept in the journal)')
    .action(async (runId: string, options: DecideCommandOptions) =>
      (await import('./approve-action.js')).decideAction(io, runId, 'denied', options),
    );
}
