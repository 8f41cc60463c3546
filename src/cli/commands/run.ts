/**
 * `fleetbook run <playbook|bundled-name>`: loads and checks the playbook (problems: exit 2,
 * before any request), connects (embedded simulator or FLEETBOOK_*), runs it, and ends
 * with 0 (succeeded), 1 (failed) or 130 (interrupted by SIGINT/SIGTERM).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { parseInputText, resolveInputs } from '../../engine/index.js';
import { runPlaybookWithLock } from '../../scheduler/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook } from '../../playbook/index.js';
import { openRunStore } from '../../store/index.js';
import { openConnection } from '../connection.js';
import type { CliIo } from '../io.js';
import { formatProblems } from '../problems.js';
import { createCommandLogger, LOG_LEVELS, parseTimeScale, reportResult, wantsJson, withInterruption } from '../run-session.js';

interface RunCommandOptions {
  input: string[];
  inputs?: string;
  target?: string;
  profile?: string;
  timeScale: string;
  dryRun?: boolean;
  json?: boolean;
  logFile?: string;
  logLevel: string;
}

/** `-i name=value` pairs, read with the declared types; `--inputs` file values under them. */
function gatherInputs(playbook: Playbook, options: RunCommandOptions): Record<string, unknown> {
  let given: Record<string, unknown> = {};
  if (options.inputs) {
    let document: unknown;
    try {
      document = parse(readFileSync(options.inputs, 'utf8'));
    } catch (error) {
      throw new UsageError(`--inputs ${options.inputs}: ${(error as Error).message}`, 'INVALID_INPUTS_FILE');
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) {
      throw new UsageError(`--inputs ${options.inputs} must hold a mapping of input names to values.`, 'INVALID_INPUTS_FILE');
    }
    given = { ...(document as Record<string, unknown>) };
  }
  for (const pair of options.input) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`-i expects name=value, got '${pair}'.`, 'INVALID_OPTION');
    const name = pair.slice(0, at);
    given[name] = parseInputText(playbook.inputs[name], pair.slice(at + 1));
  }
  return given;
}

export function registerRunCommand(program: Command, io: CliIo): void {
  program
    .command('run')
    .description('run a playbook (a file, or the name of a bundled playbook)')
    .argument('<playbook>', 'playbook file or bundled name')
    .option('-i, --input <name=value>', 'an input (repeatable); non-string types are read as JSON', (value: string, previous: string[]) => [...previous, value], [])
    .option('--inputs <file>', 'YAML or JSON file of inputs (-i wins)')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms', '60')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('--dry-run', 'perform reads, print the writes instead of sending them')
    .option('--json', 'JSON log lines on standard output (the default when it is not a terminal)')
    .option('--log-file <path>', 'also write JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (reference: string, options: RunCommandOptions) => {
      const timeScale = parseTimeScale(options.timeScale);

      const loaded = loadPlaybook(resolvePlaybookRef(reference, process.cwd()));
      if (!loaded.playbook || hasErrors(loaded.problems)) {
        io.stderr.write(`${formatProblems(loaded.problems)}\n`);
        io.exitCode = ExitCode.usage;
        return;
      }
      const playbook = loaded.playbook;
      const inputs = gatherInputs(playbook, options);
      // Checked here too so a missing input costs no simulator start or connection.
      resolveInputs(playbook.inputs, inputs, playbook.name);

      const json = wantsJson(io, options);
      const secrets = createSecretRegistry();
      const logger = createCommandLogger(io, options, secrets);
      const runId = randomUUID();

      const store = await openRunStore({ env: io.env });
      try {
        // The client's own lines (retries, rate limits) carry the run too.
        const clientLogger = logger.child({ runId, playbook: playbook.name });
        const connection = await openConnection({ target: options.target, profile: options.profile, timeScale, env: io.env, logger: clientLogger, secrets });
        try {
          if (!json) io.stdout.write(`Running ${playbook.name} (run ${runId}) against ${connection.description}${options.dryRun ? ', dry run' : ''}\n`);
          const result = await withInterruption(logger, (signal) =>
            // A playbook's `lock` keeps a manual run and a scheduled one off the same systems.
            runPlaybookWithLock(playbook, { inputs, client: connection.client, store, logger, secrets, signal, dryRun: options.dryRun === true, runId, env: io.env }),
          );
          reportResult(io, json, secrets, result, { simulatedSteps: result.simulatedSteps });
        } finally {
          await connection.close();
        }
      } finally {
        await store.close();
      }
    });
}
