/**
 * `fleetbook runs`: the history kept in the run store. `list` (the default) shows recent
 * runs, `show <runId>` one run's step tree, `prune` forgets runs that ended long ago.
 * A readable table, or JSON with `--json`.
 * Its options and help; the work is in runs-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
// The types module, not the store's index: that one loads the SQLite driver.
import { RunStatus } from '../../store/types.js';
import type { CliIo } from '../io.js';

export function registerRunsCommand(program: Command, io: CliIo): void {
  const runs = program.command('runs').description('the run history: list runs, show one step by step, prune old ones');

  runs
    .command('list', { isDefault: true })
    .description('recent runs, newest first')
    .option('--playbook <name>', 'only runs of this playbook')
    // `crashed`: running in the store, but no live process holds its lease (see runs-action.ts).
    .option('--status <status>', `only runs with this status (${[...Object.values(RunStatus), 'crashed'].join(', ')})`)
    .option('--since <when>', 'only runs started since: a duration back from now (7d, 12h) or a date')
    .option('--limit <n>', 'at most this many runs', '50')
    .option('--json', 'print one JSON object per run')
    .action(async (options: { playbook?: string; status?: string; since?: string; limit: string; json?: boolean }) => (await import('./runs-action.js')).listRunsAction(io, options));

  runs
    .command('show')
    .description('one run: its inputs, outcome and step tree with status, attempts, durations, async operations and errors')
    .argument('<runId>', 'the run id (see fleetbook runs list)')
    .option('--json', 'print the run and its step tree as one JSON object')
    .action(async (runId: string, options: { json?: boolean }) => (await import('./runs-action.js')).showRunAction(io, runId, options));

  runs
    .command('prune')
    .description('delete runs (and their journals) that ended before a cutoff; running runs are kept')
    .option('--older-than <age>', 'a duration (30d) or a date; default: FLEETBOOK_RETENTION')
    .option('--json', 'print the result as JSON')
    .action(async (options: { olderThan?: string; json?: boolean }) => (await import('./runs-action.js')).pruneRunsAction(io, options));
}
