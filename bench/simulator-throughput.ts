/**
 * Simulator throughput and memory. The world of 5,000 systems (and 50,000 devices when the
 * devices area is mounted) is built once in this process for its build time and RSS; the
 * throughput is then taken against the same world served by a simulator in a process of its
 * own (one core), so the load generator here (undici, keep-alive, 20 connections, ~5 s per
 * measure) does not share its event loop: requests/s for a GET by id and a paged list (pages of
 * 10), and the serving process's RSS after the load.
 * Run: npx tsx bench/simulator-throughput.ts
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { areaModules } from '../src/simulator/areas/index.js';
import { startSimulator, type SimulatorOptions } from '../src/simulator/index.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const CONNECTIONS = 20;
const DURATION_MS = 5_000;

const hasDevices = areaModules.some((area) => area.key === 'devices');
const options: SimulatorOptions = {
  world: { privateCloud: { systems: 5_000 }, ...(hasDevices ? { devices: { devices: 50_000 } } : {}) },
  rateLimits: { privateCloud: 1e9 },
};

const rssBefore = process.memoryUsage().rss;
const buildStarted = performance.now();
const built = await startSimulator(options);
const buildMs = performance.now() - buildStarted;
const rssWorld = process.memoryUsage().rss;
await built.close();

/** Resident set of a process of this machine, from /proc (Linux). */
function rssOf(pid: number): number | undefined {
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds a process of this machine has used, from /proc (Linux): the requests per second
 * of the simulator's CPU say what the simulator costs when the load generator or other jobs
 * leave it less than a core, which the requests per second of wall time cannot.
 */
function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // utime and stime, the 14th and 15th fields, in clock ticks (100 a second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const sim = await startSimulatorProcess(options);
const pool = new Pool(sim.url, { connections: CONNECTIONS, pipelining: 1 });
const tokenResponse = await pool.request({
  method: 'POST',
  path: '/as/token.oauth2',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: 'grant_type=client_credentials&client_id=sim-admin&client_secret=sim-admin-secret',
});
const { access_token: token } = (await tokenResponse.body.json()) as { access_token: string };
const headers = { authorization: `Bearer ${token}` };
const listResponse = await pool.request({
  method: 'GET',
  path: '/private-cloud-business/v1beta1/systems?limit=100',
  headers,
});
const { items } = (await listResponse.body.json()) as { items: Array<{ id: string }> };

/**
 * Requests/s with CONNECTIONS concurrent loops for DURATION_MS, and per second of the
 * simulator's CPU when /proc tells it; counts non-200 answers.
 */
async function measure(
  pathOf: (i: number) => string,
): Promise<{ perSecond: number; perCpuSecond: number | undefined; errors: number }> {
  let done = 0;
  let errors = 0;
  const cpuBefore = cpuSecondsOf(sim.pid);
  const until = performance.now() + DURATION_MS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const response = await pool.request({ method: 'GET', path: pathOf(done), headers });
        await response.body.dump();
        if (response.statusCode !== 200) errors += 1;
        done += 1;
      }
    }),
  );
  const cpuAfter = cpuSecondsOf(sim.pid);
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? 0 : cpuAfter - cpuBefore;
  return {
    perSecond: done / ((performance.now() - started) / 1000),
    perCpuSecond: cpuSeconds > 0 ? done / cpuSeconds : undefined,
    errors,
  };
}

const byId = await measure((i) => `/private-cloud-business/v1beta1/systems/${items[i % items.length]!.id}`);
const paged = await measure((i) => `/private-cloud-business/v1beta1/systems?offset=${(i * 10) % 4_990}&limit=10`);
const rssServing = rssOf(sim.pid);
await pool.close();
await sim.close();

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);
const perCpu = ({ perCpuSecond }: { perCpuSecond: number | undefined }): string =>
  perCpuSecond === undefined ? '' : `, ${perCpuSecond.toFixed(0)} per second of the simulator's CPU`;
console.log(
  `simulator: get-by-id ${byId.perSecond.toFixed(0)} req/s (${byId.errors} errors${perCpu(byId)}), paged list ${paged.perSecond.toFixed(0)} req/s (${paged.errors} errors${perCpu(paged)}), ` +
    `world 5000 systems${hasDevices ? ' + 50000 devices' : ''} built in ${buildMs.toFixed(0)} ms, RSS ${mib(rssBefore)} -> ${mib(rssWorld)} MiB (world); serving process ${rssServing === undefined ? '?' : mib(rssServing)} MiB after the load; aim 5000 req/s: ${Math.min(byId.perSecond, paged.perSecond) >= 5000 ? 'met' : 'not met'}`,
);
