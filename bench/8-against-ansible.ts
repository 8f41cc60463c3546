/**
 * Benchmark 8, against the tool operators use today: the same workload (R = 200 GETs of systems,
 * then O = 20 prechecks of 5 simulated minutes = 2 real seconds, each followed to its end)
 * against one simulator, as an Ansible playbook (`ansible/workload.yaml`, uri module with
 * until/retries) and as a Fleetbook playbook run by the CLI (`fleetbook run`, compiled: `npm run
 * build` first). Both are whole processes timed from the command line. Figure: the ratio of wall
 * times (Ansible / Fleetbook). Ansible comes from Debian's packages: installed with apt-get when
 * missing (as root), the benchmark skipped with a message when it cannot be.
 * Run alone: npx tsx bench/8-against-ansible.ts [--quick]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listFleet } from './lib/fleet.js';
import { createBenchClient, printFigures, quick, rootDir } from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const READS = quick ? 50 : 200;
const OPERATIONS = quick ? 5 : 20;
/** A 5-minute precheck lasts 2 real seconds. */
const TIME_SCALE = 150;

function hasAnsible(): boolean {
  return spawnSync('ansible-playbook', ['--version'], { stdio: 'ignore' }).status === 0;
}

function installAnsible(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root, so apt-get cannot install it';
  const options = { stdio: 'ignore' as const, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
  try {
    execFileSync('apt-get', ['update'], options);
    execFileSync('apt-get', ['install', '-y', 'ansible'], options);
  } catch (error) {
    return `apt-get failed: ${(error as Error).message.split('\n')[0]}`;
  }
  return hasAnsible() ? undefined : 'apt-get ran but ansible-playbook is still missing';
}

if (!hasAnsible()) {
  const why = installAnsible();
  if (why) {
    printFigures('8 against-ansible', `skipped: Ansible is not installed and cannot be (${why})`, []);
    process.exit(0);
  }
}

/** Wall time of a command in ms; throws with its output when it fails. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(command, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} exited ${String(result.status)}:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  return elapsed;
}

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-ansible-'));
const sim = await startSimulatorProcess({ world: { privateCloud: { systems: 120, failures: [] } }, timeScale: TIME_SCALE });
try {
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin')!;
  const fleet = await listFleet(createBenchClient(sim));
  const online = fleet.filter((system) => system.state === 'ONLINE');
  const eligible = online.filter((system) => system.updateSupported && system.offers('2.4.0'));
  const pick = (system: { id: string; region: string }) => ({ id: system.id, region: system.region });
  const reads = Array.from({ length: READS }, (_, i) => pick(online[i % online.length]!));
  // Each side gets systems of its own for the prechecks (a system runs one operation at a time).
  if (eligible.length < 2 * OPERATIONS) throw new Error(`only ${eligible.length} systems can run prechecks, ${2 * OPERATIONS} needed`);
  const prechecksOf = (side: number) => eligible.slice(side * OPERATIONS, (side + 1) * OPERATIONS).map(pick);

  const ansibleVars = join(dir, 'ansible-vars.json');
  writeFileSync(ansibleVars, JSON.stringify({ sim: sim.url, client_id: admin.clientId, client_secret: admin.clientSecret, reads, prechecks: prechecksOf(0) }));
  const ansibleMs = timed('ansible-playbook', ['-i', 'localhost,', join(rootDir, 'bench', 'ansible', 'workload.yaml'), '-e', `@${ansibleVars}`], {
    ...process.env,
    ANSIBLE_HOST_KEY_CHECKING: 'False',
    ANSIBLE_LOCALHOST_WARNING: 'False',
    ANSIBLE_INVENTORY_UNPARSED_WARNING: 'False',
  });

  const fleetbookInputs = join(dir, 'fleetbook-inputs.json');
  writeFileSync(fleetbookInputs, JSON.stringify({ reads, prechecks: prechecksOf(1) }));
  const fleetbookMs = timed(
    process.execPath,
    [join(rootDir, 'bin', 'fleetbook.js'), 'run', join(rootDir, 'bench', 'playbooks', 'ansible-workload.yaml'), '--inputs', fleetbookInputs, '--json'],
    {
      ...process.env,
      FLEETBOOK_HOME: join(dir, 'home'),
      FLEETBOOK_AUTH_URL: sim.authUrl,
      FLEETBOOK_BASE_URL: sim.baseUrl,
      FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
      FLEETBOOK_CLIENT_ID: admin.clientId,
      FLEETBOOK_CLIENT_SECRET: admin.clientSecret,
      FLEETBOOK_REGION: 'us-west',
    },
  );
  printFigures(
    '8 against-ansible',
    `${READS} GETs + ${OPERATIONS} prechecks followed to their end (2 s each): Ansible ${(ansibleMs / 1000).toFixed(1)} s, Fleetbook ${(fleetbookMs / 1000).toFixed(1)} s; ` +
      `ratio Ansible/Fleetbook ${(ansibleMs / fleetbookMs).toFixed(1)}×`,
    [],
  );
} finally {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
