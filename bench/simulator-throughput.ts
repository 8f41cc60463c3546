/**
 * Simulator throughput and memory: requests/s for a GET by id and a paged list over
 * loopback (keep-alive, 20 connections, ~5 s each; the list is the default page of 10) with a world of 5,000 systems (and
 * 50,000 devices when the devices area is mounted), and the RSS it takes.
 * Run: npx tsx bench/simulator-throughput.ts
 */
import { Pool } from 'undici';
import { areaModules } from '../src/simulator/areas/index.js';
import { startSimulator } from '../src/simulator/index.js';

const CONNECTIONS = 20;
const DURATION_MS = 5_000;

const rssBefore = process.memoryUsage().rss;
const hasDevices = areaModules.some((area) => area.key === 'devices');
const buildStarted = performance.now();
const sim = await startSimulator({
  world: { privateCloud: { systems: 5_000 }, ...(hasDevices ? { devices: { devices: 50_000 } } : {}) },
  rateLimits: { privateCloud: 1e9 },
});
const buildMs = performance.now() - buildStarted;
const rssWorld = process.memoryUsage().rss;

const pool = new Pool(sim.url, { connections: CONNECTIONS, pipelining: 1 });
const tokenResponse = await pool.request({
  method: 'POST',
  path: '/as/token.oauth2',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: 'grant_type=client_credentials&client_id=sim-admin&client_secret=sim-admin-secret',
});
const { access_token: token } = (await tokenResponse.body.json()) as { access_token: string };
const headers = { authorization: `Bearer ${token}` };
const listResponse = await pool.request({ method: 'GET', path: '/private-cloud-business/v1beta1/systems?limit=100', headers });
const { items } = (await listResponse.body.json()) as { items: Array<{ id: string }> };

/** Requests/s with CONNECTIONS concurrent loops for DURATION_MS; counts non-200 answers. */
async function measure(pathOf: (i: number) => string): Promise<{ perSecond: number; errors: number }> {
  let done = 0;
  let errors = 0;
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
  return { perSecond: done / ((performance.now() - started) / 1000), errors };
}

const byId = await measure((i) => `/private-cloud-business/v1beta1/systems/${items[i % items.length]!.id}`);
const paged = await measure((i) => `/private-cloud-business/v1beta1/systems?offset=${(i * 10) % 4_990}&limit=10`);
const rssAfter = process.memoryUsage().rss;
await pool.close();
await sim.close();

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);
console.log(
  `simulator: get-by-id ${byId.perSecond.toFixed(0)} req/s (${byId.errors} errors), paged list ${paged.perSecond.toFixed(0)} req/s (${paged.errors} errors), ` +
    `world 5000 systems${hasDevices ? ' + 50000 devices' : ''} built in ${buildMs.toFixed(0)} ms, RSS ${mib(rssBefore)} -> ${mib(rssWorld)} MiB (world) -> ${mib(rssAfter)} MiB (after load); aim 5000 req/s: ${Math.min(byId.perSecond, paged.perSecond) >= 5000 ? 'met' : 'not met'}`,
);
