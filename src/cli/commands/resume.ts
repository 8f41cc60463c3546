/**
 * `fleetbook resume <runId>`: continues an interrupted, crashed or failed run (see
 * docs/resume.md). The playbook is loaded again from where the run loaded it; a changed
 * playbook, a run driven elsewhere, or a write of unknown outcome that cannot be reconciled
 * end with exit 2 and the reason. Then as `fleetbook run`: 0, 1 or 130.
 * Its options and help; the work is in resume-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { ResumeCommandOptions } from './resume-action.js';

export function registerResumeCommand(program: Command, io: CliIo): void {
  program
    .command('resume')
    .description('continue an interrupted, crashed or failed run: what succeeded is not run again')
    .argument('<runId>', 'the run (see `fleetbook runs list`)')
    .option('--force', 'resume although the playbook changed since the run started')
    .option('--confirm-unknown', 'send again writes whose outcome is unknown and cannot be reconciled')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option(
      '-o, --output <format>',
      'text (readable log lines and a summary, the default on a terminal), json (JSON log lines, the default otherwise), yaml (the result; log lines on stderr), wide (= text)',
    )
    .option('--json', 'shorthand for --output json')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (runId: string, options: ResumeCommandOptions) =>
      (await import('./resume-action.js')).resumeAction(io, runId, options),
    );
}
