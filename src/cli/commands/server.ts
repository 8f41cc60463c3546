/**
 * `fleetbook server [--port] [--host] [--no-worker]`: the HTTP API, the web UI, `/metrics` and
 * `/healthz` on one port; the scheduler of the playbook folder (a leader candidate, as a daemon
 * is) and, with a shared store, a worker in the same process. SIGTERM or SIGINT stops it:
 * no new requests, the runs it drives stop at a journaled point, the lease is released.
 * Its options and help; the work is in server-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { ServerCommandOptions } from './server-action.js';

export function registerServerCommand(program: Command, io: CliIo): void {
  program
    .command('server')
    .description('serve the HTTP API, the web UI and /metrics; run the scheduler (and a worker) in the same process')
    .option('--port <port>', 'port to listen on (0: a free one)', '8080')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--no-worker', 'with a shared store: drive no runs here (workers claim them)')
    .option('--concurrency <n>', "the in-process worker's runs at once", '4')
    .option('--playbooks <dir>', 'folder of playbooks', 'playbooks')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('-o, --output <format>', 'json (JSON log lines, the default) or text (readable lines)')
    .option('--log-file <path>', 'also write the JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (options: ServerCommandOptions) => (await import('./server-action.js')).serverAction(io, options));
}
