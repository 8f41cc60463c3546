/**
 * The bundled declarative playbooks and the rolling update, each planned and then applied on a
 * simulator on port 0: every write the apply sent (the simulator's request log) was in the plan,
 * and every planned write was sent. The world has no pinned failure: a failure the plan cannot
 * foresee (a resume, prechecks run again once expired) is a write the plan does not hold, which
 * apply refuses by design; prechecks stay valid here at the fast time scale.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';

let dir: string;
let sim: Simulator | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-plan-apply-'));
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const CASES: Array<[string, Record<string, unknown>]> = [
  [
    'provisioning-policy-sync',
    {
      policies: [
        { name: 'silver-thin', description: 'silver, revised' },
        { name: 'new-one', description: 'd' },
      ],
      prune: true,
    },
  ],
  [
    'msp-tenant-provisioning',
    { tenants: [{ workspaceName: 'Plan Ltd', email: 'it@plan.example.com', address: { countryCode: 'DE' } }] },
  ],
  [
    'subscription-onboarding',
    { keys: ['PLANKEY1'], autoSubscriptions: [{ deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' }] },
  ],
  ['user-access-review', { invite: ['plan.review@example.com'], remove: true }],
  ['rolling-cluster-update', { clusterByCluster: false, catalogVersion: '2.4.0' }],
];

/** `METHOD /path` of a URL or a request-log path, without the query and the regional prefix. */
const writeKey = (method: string, url: string): string =>
  `${method} ${new URL(url, 'http://x').pathname.replace(/^\/regions\/[^/]+/, '')}`;

it.each(CASES)('%s: the apply sends exactly the writes its plan holds', async (name, inputs) => {
  sim = await startSimulator({
    port: 0,
    timeScale: 60_000,
    world: { privateCloud: { failures: [], precheckValidityMinutes: 1_000_000 } },
  });
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  const env = {
    FLEETBOOK_HOME: join(dir, 'home'),
    FLEETBOOK_CLIENT_ID: admin?.clientId,
    FLEETBOOK_CLIENT_SECRET: admin?.clientSecret,
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
  const inputsFile = join(dir, 'inputs.json');
  writeFileSync(inputsFile, JSON.stringify(inputs));
  const planFile = join(dir, 'plan.json');
  const planned = await runCli(['plan', name, '--inputs', inputsFile, '--out', planFile], { env });
  expect(planned.code, planned.stderr).toBe(0);
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as {
    writes: Array<{ request: { method: string; url: string } }>;
  };
  expect(plan.writes.length).toBeGreaterThan(0);
  const isWrite = (entry: { method: string; path: string; operationId?: string }) =>
    entry.method !== 'GET' && !entry.path.startsWith('/as/token');
  expect(sim.control.requests().filter(isWrite)).toEqual([]);
  const applied = await runCli(['apply', planFile, '-o', 'json'], { env });
  expect(applied.code, applied.stdout.slice(-2000)).toBe(0);
  const sent = sim.control
    .requests()
    .filter(isWrite)
    .map((entry) => writeKey(entry.method, entry.path));
  expect(sent.sort()).toEqual(plan.writes.map((write) => writeKey(write.request.method, write.request.url)).sort());
});
