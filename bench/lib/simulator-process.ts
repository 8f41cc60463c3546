/** Starts `simulator-child.ts` (through tsx) and reads its connection line. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ApiClient, RequestLogEntry, SimulatorOptions } from '../../src/simulator/index.js';

export interface SimulatorProcess {
  url: string;
  authUrl: string;
  baseUrl: string;
  regionalUrl: string;
  clients: ApiClient[];
  pid: number;
  /** The request log (`/_sim/requests`), optionally of one operation. */
  requests(operationId?: string): Promise<RequestLogEntry[]>;
  close(): Promise<void>;
}

const childScript = fileURLToPath(new URL('./simulator-child.ts', import.meta.url));

/** Node options of the simulator's process only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof-sim` to profile it. */
const nodeOptions = (process.env.BENCH_SIMULATOR_NODE_OPTIONS ?? '').split(' ').filter(Boolean);

export async function startSimulatorProcess(options: SimulatorOptions = {}): Promise<SimulatorProcess> {
  const child = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', childScript, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the simulator process exited (${String(code)}) before it served`);
    }),
  ])) as [string];
  lines.close();
  const connection = JSON.parse(first) as Omit<SimulatorProcess, 'requests' | 'close' | 'pid'>;
  return {
    ...connection,
    pid: child.pid ?? 0,
    async requests(operationId) {
      const query = operationId ? `?operationId=${encodeURIComponent(operationId)}` : '';
      const response = await fetch(`${connection.url}/_sim/requests${query}`);
      return ((await response.json()) as { items: RequestLogEntry[] }).items;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
