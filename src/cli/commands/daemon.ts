/**
 * `fleetbook daemon [--playbooks dir]`: the scheduler, until SIGTERM. Refuses to start (exit
 * 2, located problems) when a playbook of the folder is invalid; connects like `fleetbook
 * run`; logs JSON lines on standard output; SIGHUP reloads the folder; SIGTERM or SIGINT
 * stops firing, stops running runs at a journaled point, releases the lease and exits 0.
 * Its options and help; the work is in daemon-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { LOG_LEVELS } from '../log-levels.js';
import type { DaemonCommandOptions } from './daemon-action.js';

export function registerDaemonCommand(program: Command, io: CliIo): void {
  program
    .command('daemon')
    .description(
      'fire the schedules of every playbook in a folder, until SIGTERM (one daemon per store; others wait as standbys)',
    )
    .option('--playbooks <dir>', 'folder of playbooks', 'playbooks')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms (default 60)')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('--lease-ttl <duration>', 'how long the scheduler lease outlives a daemon that stopped renewing it', '30s')
    .option('-o, --output <format>', 'json (JSON log lines, the default) or text (readable lines)')
    .option('--json', 'shorthand for --output json')
    .option(
      '--metrics-port <n>',
      "serve this process's Prometheus metrics on /metrics at this port (0: a free one, logged)",
    )
    .option('--metrics-host <addr>', 'address of the metrics port', '127.0.0.1')
    .option('--log-file <path>', 'also write the JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (options: DaemonCommandOptions) => (await import('./daemon-action.js')).daemonAction(io, options));
}
