/**
 * A simulator in a process of its own, so the benchmark process's CPU and RSS are
 * Fleetbook's alone. Options come as JSON in argv[2]; the connection is printed as one
 * JSON line; it serves until SIGTERM.
 */
import { startSimulator, type SimulatorOptions } from '../../src/simulator/index.js';

const options = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions;
const sim = await startSimulator({ port: 0, ...options });
process.stdout.write(
  `${JSON.stringify({ url: sim.url, authUrl: sim.authUrl, baseUrl: sim.baseUrl, regionalUrl: sim.regionalUrl, clients: sim.clients })}\n`,
);
process.once('SIGTERM', () => {
  void sim.close().then(() => process.exit(0));
});
