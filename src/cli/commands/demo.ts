/**
 * `fleetbook demo` (what `npm start` runs): starts the embedded simulator and runs three
 * bundled playbooks through the engine, in one process with a memory run store: the
 * rolling cluster update across the default world (whose pinned failure is resumed), a
 * nightly report export e-mailed to two recipients, and a consumption CSV download mailed by
 * an `email` step; then the simulator's outbox (what those runs mailed: a rehearsal mails no
 * one). It prints what happened as an operator wants to read it, or the same as JSON lines.
 * Its options and help; the work is in demo-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { addOutputOptions } from '../output-option.js';
import type { DemoOptions } from './demo-action.js';

export function registerDemoCommand(program: Command, io: CliIo): void {
  const command = program
    .command('demo')
    .description(
      'run the rolling update, a report export and a CSV download against the embedded simulator, and say what happened',
    )
    .option('--time-scale <n>', 'simulated ms per real ms of the embedded simulator', '1200')
    .option('--output-dir <dir>', 'where the CSV and the log file go', 'fleetbook-demo');
  addOutputOptions(command).action(async (options: DemoOptions) =>
    (await import('./demo-action.js')).demoAction(io, options),
  );
}
