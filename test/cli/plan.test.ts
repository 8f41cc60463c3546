/**
 * `fleetbook plan` against a simulator on port 0, as an operator would use it before touching
 * production: what it prints, the plan file it writes, and the simulator's request log, which
 * shows reads only (no write sent). Bad input is refused with exit 2.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';

let dir: string;
let sim: Simulator | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-plan-'));
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function simulatorEnv(): Promise<NodeJS.ProcessEnv> {
  sim = await startSimulator({ port: 0, timeScale: 6000 });
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  return {
    FLEETBOOK_HOME: join(dir, 'home'),
    FLEETBOOK_CLIENT_ID: admin?.clientId,
    FLEETBOOK_CLIENT_SECRET: admin?.clientSecret,
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
}

/** The default world's policies: gold kept as it is, silver's description changed, platinum new, bronze pruned. */
const POLICIES = `policies:
  - { name: gold-thin-encrypted, description: "gold-thin-encrypted: deduplicated volumes, 50000 IOPS limit" }
  - { name: silver-thin, description: "silver, now encrypted" }
  - { name: platinum, description: all flash, storageType: dHCI }
prune: true
`;

/** Makes the plan of POLICIES into `dir`/plan.json; the plan file's path. */
async function planPolicies(env: NodeJS.ProcessEnv): Promise<string> {
  const inputs = join(dir, 'policies.yaml');
  writeFileSync(inputs, POLICIES);
  const out = join(dir, 'plan.json');
  const planned = await runCli(['plan', 'provisioning-policy-sync', '--inputs', inputs, '--out', out], { env });
  expect(planned.code, planned.stderr).toBe(0);
  return out;
}

const writesSent = () =>
  sim!.control.requests().filter((entry) => entry.method !== 'GET' && !entry.path.startsWith('/as/token'));

describe('fleetbook plan', () => {
  it('shows each change against live state, writes the plan file, and sends no write', async () => {
    const env = await simulatorEnv();
    const inputs = join(dir, 'policies.yaml');
    writeFileSync(inputs, POLICIES);
    const out = join(dir, 'plan.json');
    const result = await runCli(['plan', 'provisioning-policy-sync', '--inputs', inputs, '--out', out], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^\+ privateCloud\.createProvisioningPolicy\s+platinum\s/);
    expect(lines[1]).toMatch(/^~ privateCloud\.updateProvisioningPolicy\s+silver-thin \(id [0-9a-f-]+\)/);
    expect(lines[2]).toBe(
      '    description: "silver-thin: deduplicated volumes, 20000 IOPS limit" -> "silver, now encrypted"',
    );
    expect(lines[3]).toMatch(/^- privateCloud\.deleteProvisioningPolicy\s+bronze-file \(id /);
    expect(result.stdout).toContain('Plan: 1 to add, 1 to change, 1 to delete, 0 to run; 1 read.');
    // Gold is as declared: no line for it.
    expect(result.stdout).not.toContain('gold-thin-encrypted');
    expect(writesSent()).toEqual([]);
    const plan = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> & {
      writes: Array<{ change: string; resource: string; changes: unknown[] }>;
    };
    expect(plan).toMatchObject({ planVersion: 1, playbook: 'provisioning-policy-sync', reads: 1 });
    expect(plan.playbookHash).toMatch(/^[0-9a-f]{64}$/);
    expect(plan.writes.map((write) => [write.change, write.resource])).toEqual([
      ['create', 'platinum'],
      ['update', 'silver-thin'],
      ['delete', 'bronze-file'],
    ]);
  });

  it("shows an update's cluster versions before and after, and -o json gives the same as data", async () => {
    const env = await simulatorEnv();
    const result = await runCli(
      ['plan', 'rolling-cluster-update', '-i', 'clusterByCluster=false', '-i', 'catalogVersion=2.4.0', '-o', 'json'],
      { env },
    );
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      writes: Array<{
        operationId: string;
        resource: string;
        changes: Array<{ path: string; from: string; to: string }>;
      }>;
      summary: Record<string, number>;
    };
    const updates = plan.writes.filter((write) => write.operationId === 'privateCloud.runSoftwareUpdate');
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) {
      expect(update.changes.length).toBeGreaterThan(0);
      for (const change of update.changes) {
        expect(change.path).toMatch(/\.currentSoftwareCatalog\.version$/);
        expect(change.to).toBe('2.4.0');
        expect(change.from).not.toBe('2.4.0');
      }
    }
    expect(plan.summary.change).toBe(updates.length);
    expect(writesSent()).toEqual([]);
  });

  it('refuses bad input with exit 2 and sends no write: a missing input, an unwritable --out', async () => {
    const env = await simulatorEnv();
    const missing = await runCli(['plan', 'provisioning-policy-sync'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("input 'policies'");
    const inputs = join(dir, 'policies.yaml');
    writeFileSync(inputs, POLICIES);
    const unwritable = await runCli(
      ['plan', 'provisioning-policy-sync', '--inputs', inputs, '--out', join(dir, 'no', 'such', 'dir', 'plan.json')],
      { env },
    );
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toMatch(/--out .*plan\.json/);
    expect(unwritable.stderr).not.toMatch(/\n\s+at /);
    expect(writesSent()).toEqual([]);
  });
});

describe('fleetbook apply', () => {
  it('sends exactly the planned writes', async () => {
    const env = await simulatorEnv();
    const plan = await planPolicies(env);
    const applied = await runCli(['apply', plan, '-o', 'json'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const planned = JSON.parse(readFileSync(plan, 'utf8')) as { writes: Array<{ id?: string }> };
    const [, silver, bronze] = planned.writes;
    expect(writesSent().map((entry) => `${entry.method} ${entry.path.replace(/\?.*$/, '')}`)).toEqual([
      'POST /regions/us-west/private-cloud-business/v1beta1/vm-provisioning-policies',
      `PATCH /regions/us-west/private-cloud-business/v1beta1/vm-provisioning-policies/${silver?.id}`,
      `DELETE /regions/us-west/private-cloud-business/v1beta1/vm-provisioning-policies/${bronze?.id}`,
    ]);
  });

  it('stops at a resource changed since the plan (PLAN_STALE, naming it), and sends nothing after it', async () => {
    const env = await simulatorEnv();
    const plan = await planPolicies(env);
    const planned = JSON.parse(readFileSync(plan, 'utf8')) as { writes: Array<{ id?: string }> };
    const silverId = planned.writes[1]?.id;
    // Someone else changes silver's description between the plan and its apply.
    const token = await fetch(`${sim!.authUrl}/as/token.oauth2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'sim-admin',
        client_secret: 'sim-admin-secret',
      }),
    });
    const bearer = ((await token.json()) as { access_token: string }).access_token;
    const changed = await fetch(
      `${sim!.regionalUrl.replace('{region}', 'us-west')}/private-cloud-business/v1beta1/vm-provisioning-policies/${silverId}`,
      {
        method: 'PATCH',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ description: 'changed by a colleague' }),
      },
    );
    expect(changed.status).toBeLessThan(300);
    sim!.control.clearRequests();
    const applied = await runCli(['apply', plan, '-o', 'json'], { env });
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain('PLAN_STALE');
    expect(applied.stdout).toMatch(
      /silver-thin: changed since the plan[^"]*description is now \\"changed by a colleague\\"/,
    );
    // The create came before the drifted update in the playbook; nothing after the drift was sent.
    expect(writesSent().map((entry) => entry.method)).toEqual(['POST']);
  });

  it('refuses a truncated plan, a plan for another version of the playbook, one too old, or another target (exit 2)', async () => {
    const env = await simulatorEnv();
    const plan = await planPolicies(env);
    const text = readFileSync(plan, 'utf8');
    const variant = (name: string, body: string) => {
      const file = join(dir, name);
      writeFileSync(file, body);
      return file;
    };
    const truncated = await runCli(['apply', variant('truncated.json', text.slice(0, 200))], { env });
    expect([truncated.code, truncated.stderr]).toEqual([2, expect.stringContaining('not a plan (not JSON')]);
    const edited = JSON.parse(text) as Record<string, unknown>;
    const otherHash = await runCli(
      ['apply', variant('hash.json', JSON.stringify({ ...edited, playbookHash: '0'.repeat(64) }))],
      { env },
    );
    expect([otherHash.code, otherHash.stderr]).toEqual([
      2,
      expect.stringContaining('another version of provisioning-policy-sync'),
    ]);
    const noWrites = await runCli(['apply', variant('shape.json', JSON.stringify({ ...edited, writes: 'all' }))], {
      env,
    });
    expect([noWrites.code, noWrites.stderr]).toEqual([2, expect.stringContaining('writes must be a list')]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const old = await runCli(['apply', plan, '--max-age', '1ms'], { env });
    expect([old.code, old.stderr]).toEqual([2, expect.stringContaining('--max-age')]);
    const elsewhere = await runCli(['apply', plan, '--target', 'simulator'], { env });
    expect([elsewhere.code, elsewhere.stderr]).toEqual([2, expect.stringContaining('the plan was made against')]);
    for (const outcome of [truncated, otherHash, noWrites, old, elsewhere])
      expect(outcome.stderr).not.toMatch(/\n\s+at /);
    expect(writesSent()).toEqual([]);
  });
});
