/**
 * `fleetbook simulate`: the platform simulator as a server of its own, until SIGTERM or
 * SIGINT. It prints the addresses and API clients an operator points Fleetbook at.
 */
import type { Command } from 'commander';
import type { Simulator } from '../../simulator/index.js';
import { UsageError } from '../../errors/index.js';
import type { CliIo } from '../io.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';

interface SimulateOptions {
  port: string;
  host: string;
  seed?: string;
  world?: string;
  timeScale: string;
  faults?: string;
  checkResponses?: boolean;
}

function parseNumberOption(name: string, text: string, check: (value: number) => boolean, expected: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !check(value)) {
    throw new UsageError(`--${name} must be ${expected}, got '${text}'`, 'INVALID_OPTION');
  }
  return value;
}

export function registerSimulateCommand(program: Command, io: CliIo): void {
  const command = program
    .command('simulate')
    .description('serve the platform simulator (every operation, auth, limits, faults) until SIGTERM/SIGINT')
    .option('--port <n>', 'port to listen on (0 picks a free one)', '4010')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', "seed of the generated world (default: the world file's seed, else 1)")
    .option('--world <file>', 'world file (YAML): sizes, pinned failures, extra API clients')
    .option('--time-scale <n>', 'divide every simulated duration by n (60: a minute takes a second)', '1')
    .option('--faults <file>', 'fault-injection file (YAML or JSON)')
    .option(
      '--check-responses',
      'check every answer against the API description; a mismatch becomes a 500 and is listed at /_sim/violations',
    );
  addOutputOptions(command).action(async (options: SimulateOptions & OutputOptions) => {
    const { isMachineFormat, outputFormat, writeMachine } = await import('../output.js');
    const format = outputFormat(options);
    const port = parseNumberOption(
      'port',
      options.port,
      (v) => Number.isInteger(v) && v >= 0 && v < 65536,
      'a port number (0-65535)',
    );
    const seed =
      options.seed === undefined ? undefined : parseNumberOption('seed', options.seed, Number.isInteger, 'an integer');
    const timeScale = parseNumberOption('time-scale', options.timeScale, (v) => v > 0, 'a positive number');
    // Imported here, not above: `--help` and the other commands do not load the simulator.
    const { startSimulator } = await import('../../simulator/index.js');
    const { SIMULATOR_REGION } = await import('../connection.js');
    const simulator = await startSimulator({
      port,
      host: options.host,
      timeScale,
      ...(seed === undefined ? {} : { seed }),
      ...(options.world ? { world: options.world } : {}),
      ...(options.faults ? { faults: options.faults } : {}),
      ...(options.checkResponses ? { validateResponses: true } : {}),
    });
    const connection = {
      url: simulator.url,
      authUrl: simulator.authUrl,
      baseUrl: simulator.baseUrl,
      regionalUrl: simulator.regionalUrl,
      // Regional calls that name no region go to this one: without it a playbook's regional steps have no address.
      region: SIMULATOR_REGION,
      clients: simulator.clients,
    };
    if (isMachineFormat(format)) writeMachine(io, format, connection);
    else io.stdout.write(banner(simulator, SIMULATOR_REGION, timeScale, options.checkResponses === true));
    await untilStopSignal();
    await simulator.close();
  });
}

/** What an operator reads: where the simulator listens, the settings to point Fleetbook at it, its API clients. */
function banner(simulator: Simulator, region: string, timeScale: number, checkResponses: boolean): string {
  return [
    `Simulator listening on ${simulator.url} (seed ${simulator.control.world().seed}, time scale ${timeScale})`,
    '',
    'Point Fleetbook at it:',
    `  export FLEETBOOK_AUTH_URL=${simulator.authUrl}`,
    `  export FLEETBOOK_BASE_URL=${simulator.baseUrl}`,
    `  export FLEETBOOK_REGIONAL_URL='${simulator.regionalUrl}'`,
    `  export FLEETBOOK_REGION=${region}`,
    `  export FLEETBOOK_CLIENT_ID=${simulator.clients[0]?.clientId ?? 'sim-admin'}`,
    `  export FLEETBOOK_CLIENT_SECRET=${simulator.clients[0]?.clientSecret ?? 'sim-admin-secret'}`,
    '',
    'API clients:',
    ...simulator.clients.map(
      (client) => `  ${client.clientId.padEnd(16)} ${client.role.padEnd(14)} secret: ${client.clientSecret}`,
    ),
    '',
    `Control surface: ${simulator.url}/_sim/ (requests, outbox, faults, clock, reset, world, violations)`,
    ...(checkResponses
      ? ['Answers are checked against the API description: a mismatch is a 500, listed at /_sim/violations.']
      : []),
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

/** Resolves at the first SIGINT or SIGTERM; the listeners go with it. */
function untilStopSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
