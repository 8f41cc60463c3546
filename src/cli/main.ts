/**
 * The `fleetbook` command. Each command lives in `commands/<name>.ts` and registers itself
 * on the program: its name, options and help only. What its action needs (the loader, the
 * engine, the store, the simulator) is imported when the action runs, so `--version`,
 * `--help` and each command load no other command's dependencies. This file only maps
 * what went wrong to the exit codes of docs/errors.md, so no command prints a stack trace for a
 * user's mistake.
 */
import { Command, CommanderError } from 'commander';
import { ExitCode, isFleetbookError, errorMessage } from '../errors/index.js';
import { registerActionsCommand } from './commands/actions.js';
import { registerApproveCommands } from './commands/approve.js';
import { registerDaemonCommand } from './commands/daemon.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerRerunCommand } from './commands/rerun.js';
import { registerResumeCommand } from './commands/resume.js';
import { registerApplyCommand } from './commands/apply.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerRunCommand } from './commands/run.js';
import { registerRunsCommand } from './commands/runs.js';
import { registerSchedulesCommand } from './commands/schedules.js';
import { registerServerCommand } from './commands/server.js';
import { registerSimulateCommand } from './commands/simulate.js';
import { registerTokensCommand } from './commands/tokens.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWorkerCommand } from './commands/worker.js';
import type { CliIo } from './io.js';
import { processIo } from './io.js';

/** Commander's own codes for requests that are not errors. */
const helpCodes = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

export function createProgram(io: CliIo): Command {
  const program = new Command('fleetbook')
    .description('Validated, durable, scheduled playbooks for the Cloud Platform Management APIs.')
    .version(io.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .exitOverride();
  registerActionsCommand(program, io);
  registerApproveCommands(program, io);
  registerDaemonCommand(program, io);
  registerDemoCommand(program, io);
  registerResumeCommand(program, io);
  registerRerunCommand(program, io);
  registerRunCommand(program, io);
  registerPlanCommand(program, io);
  registerApplyCommand(program, io);
  registerRunsCommand(program, io);
  registerSchedulesCommand(program, io);
  registerServerCommand(program, io);
  registerSimulateCommand(program, io);
  registerTokensCommand(program, io);
  registerAuditCommand(program, io);
  registerValidateCommand(program, io);
  registerWorkerCommand(program, io);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  return program;
}

/** Runs the CLI with `argv` (without node and script); resolves to the process exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = createProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return io.exitCode ?? ExitCode.success;
  } catch (error) {
    if (error instanceof CommanderError) {
      return helpCodes.has(error.code) ? ExitCode.success : ExitCode.usage;
    }
    if (isFleetbookError(error)) {
      io.stderr.write(`fleetbook: ${error.message}\n`);
      return error.exitCode;
    }
    // An internal fault: say so plainly; the stack is for bug reports, not operators.
    const message = errorMessage(error);
    io.stderr.write(`fleetbook: internal error: ${message}\n`);
    if (process.env.FLEETBOOK_DEBUG) io.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
    return ExitCode.runFailed;
  }
}
