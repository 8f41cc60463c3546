/**
 * `fleetbook runs`: the history kept in the run store. `list` (the default) shows recent
 * runs, `show <runId>` one run's outputs, log lines and step tree, `logs <runId>` its log from
 * the journal, `prune` forgets runs that ended long ago. Each takes `-o text|json|yaml|wide`.
 * Its options and help; the work is in runs-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
// The types module, not the store's index: that one loads the SQLite driver.
import { RunStatus } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { guardDefaultSubcommand } from '../subcommand-typos.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';
import { ITEMS_SHOWN_WHOLE } from './item-summary.js';

export function registerRunsCommand(program: Command, io: CliIo): void {
  const runs = program
    .command('runs')
    .description(
      'the run history: list runs, show one (outputs, log lines, steps), read its log, cancel one, prune old ones',
    );
  guardDefaultSubcommand(runs, { takesOperands: false });

  const list = runs
    .command('list', { isDefault: true })
    .description('recent runs, newest first')
    .option('--playbook <name>', 'only runs of this playbook')
    // `crashed`: running in the store, but no live process holds its lease (see runs-action.ts).
    .option('--status <status>', `only runs with this status (${[...Object.values(RunStatus), 'crashed'].join(', ')})`)
    .option('--since <when>', 'only runs started since: a duration back from now (7d, 12h) or a date')
    .option('--limit <n>', 'at most this many runs', '50');
  addOutputOptions(list).action(
    async (options: { playbook?: string; status?: string; since?: string; limit: string } & OutputOptions) =>
      (await import('./runs-action.js')).listRunsAction(io, options),
  );

  const show = runs
    .command('show')
    .description(
      'one run: its inputs, outcome, outputs (a table for a list of records), log lines and step tree with status, attempts, durations, async operations and errors',
    )
    .argument('<runId>', 'the run id or its first characters (see fleetbook runs list)')
    .option(
      '--items',
      `every item of every loop in the step tree (a loop of more than ${ITEMS_SHOWN_WHOLE} items is summarised: counts by status, the first and last items and those failed, running or interrupted)`,
    );
  addOutputOptions(show).action(async (runId: string, options: { items?: boolean } & OutputOptions) =>
    (await import('./runs-action.js')).showRunAction(io, runId, options),
  );

  const logs = runs
    .command('logs')
    .description("a run's log, read from its journal: its log: lines and what each step did")
    .argument('<runId>', 'the run id or its first characters (see fleetbook runs list)')
    .option('-f, --follow', 'keep printing new lines until the run ends')
    .option('--step <path>', 'only this step and the steps inside it (systems, systems[2].update)');
  addOutputOptions(logs).action(async (runId: string, options: { follow?: boolean; step?: string } & OutputOptions) =>
    (await import('./runs-action.js')).runLogsAction(io, runId, options),
  );

  const cancel = runs
    .command('cancel')
    .description(
      'cancel a run: a waiting, queued or interrupted one ends cancelled at once; a running one (here or on any worker) stops at a journaled point',
    )
    .argument('<runId>', 'the run id or its first characters (see fleetbook runs list)');
  addOutputOptions(cancel).action(async (runId: string, options: OutputOptions) =>
    (await import('./runs-action.js')).cancelRunAction(io, runId, options),
  );

  const prune = runs
    .command('prune')
    .description('delete runs (and their journals) that ended before a cutoff; running runs are kept')
    .option('--older-than <age>', 'a duration (30d) or a date; default: FLEETBOOK_RETENTION');
  addOutputOptions(prune).action(async (options: { olderThan?: string } & OutputOptions) =>
    (await import('./runs-action.js')).pruneRunsAction(io, options),
  );
}
