/**
 * `fleetbook worker [--concurrency N]`: a team-mode worker. Claims queued runs from the shared
 * store (FLEETBOOK_STORE or the profile's `store:`) and drives them until SIGTERM, which drains
 * it: no new claim, runs in flight stop at a journaled point and go back to the queue.
 * Its options and help; the work is in worker-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { WorkerCommandOptions } from './worker-action.js';

export function registerWorkerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('claim queued runs from the shared store (FLEETBOOK_STORE) and drive them, until SIGTERM drains it')
    .option('--concurrency <n>', 'runs driven at once', '1')
    .option(
      '--claim-ttl <duration>',
      "how long a run's claim outlives a worker that stopped renewing it (then another worker takes the run over)",
      '60s',
    )
    .option('--poll <duration>', 'how often an idle worker looks at the queue', '1s')
    .option('--exit-when-idle', 'exit once the queue is empty and no run is in flight')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option(
      '--metrics-port <n>',
      "serve this process's Prometheus metrics on /metrics at this port (0: a free one, logged)",
    )
    .option('--metrics-host <addr>', 'address of the metrics port', '127.0.0.1')
    .option('--log-file <path>', 'also write the JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (options: WorkerCommandOptions) => (await import('./worker-action.js')).workerAction(io, options));
}
