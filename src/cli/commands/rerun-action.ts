/** What `fleetbook rerun` does (see rerun.ts), imported when the command runs. */
import { rerunRequest, secretInputVariable } from '../../admission/index.js';
import { parseInputText } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook, type Playbook } from '../../playbook/index.js';
import { openRunStore, type RunRecord } from '../../store/index.js';
import { profileStore } from '../connection.js';
import { findRun } from '../find-run.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { askHidden } from './resume-action.js';
import { runLoaded, type RunCommandOptions } from './run-action.js';

export interface RerunCommandOptions {
  failed?: boolean;
  input: string[];
  target?: string;
  profile?: string;
  timeScale?: string;
  ignoreWindow?: boolean | string;
  json?: boolean;
  output?: string;
  logFile?: string;
  logLevel: string;
}

/**
 * The secret inputs given again: `-i`, else `FLEETBOOK_INPUT_<NAME>`, else asked on a terminal;
 * one that took its default when the run started takes it again. None is stored.
 */
async function secretInputsOf(
  run: RunRecord,
  playbook: Playbook,
  options: RerunCommandOptions,
  io: CliIo,
): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const pair of options.input) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`-i expects name=value, got '${pair}'.`, 'INVALID_OPTION');
    const name = pair.slice(0, at);
    values[name] = parseInputText(
      Object.hasOwn(playbook.inputs, name) ? playbook.inputs[name] : undefined,
      pair.slice(at + 1),
    );
  }
  for (const name of run.secretInputNames) {
    if (values[name] !== undefined) continue;
    const fromEnv = io.env[secretInputVariable(name)];
    if (fromEnv !== undefined) values[name] = fromEnv;
    else if (!run.defaultedSecretInputs.includes(name) && process.stdin.isTTY && io.stdout.isTTY)
      values[name] = await askHidden(`secret input '${name}' (not stored, not shown): `, io.stdout);
  }
  return values;
}

function ignoreWindowOf(options: RerunCommandOptions): { ignoreWindow?: { reason: string } } {
  const given = options.ignoreWindow;
  if (given === undefined || given === false) return {};
  return { ignoreWindow: { reason: given === true ? 'given --ignore-window' : given } };
}

/** Runs again the run `named` (its id or a prefix naming one run); `--failed`: only what failed. */
export async function rerunAction(io: CliIo, named: string, options: RerunCommandOptions): Promise<void> {
  // Opened here to find the run and its playbook; the run's host closes it.
  const store = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  let run: RunRecord;
  let playbook: Playbook;
  try {
    run = await findRun(store, named, io.env);
    const loaded = loadPlaybook(run.playbookSource, playbookLoadOptions(io.env));
    if (!loaded.playbook || hasErrors(loaded.problems)) {
      io.stderr.write(`${formatProblems(loaded.problems)}\n`);
      io.exitCode = ExitCode.usage;
      await store.close();
      return;
    }
    playbook = loaded.playbook;
  } catch (error) {
    await store.close();
    throw error;
  }
  const runOptions: RunCommandOptions = { ...options, input: [], store };
  await runLoaded(io, playbook, runOptions, undefined, {
    request: async () =>
      rerunRequest(store, run, playbook, {
        failed: options.failed === true,
        secretInputs: await secretInputsOf(run, playbook, options, io),
        ...ignoreWindowOf(options),
      }),
  });
}
