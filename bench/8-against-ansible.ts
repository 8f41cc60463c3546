/**
 * Benchmark 8, against the tool operators use today: the same workload (R = 200 GETs of systems,
 * then O = 20 prechecks of 5 simulated minutes = 2 real seconds, each followed to its end)
 * against one simulator, as an Ansible playbook (`ansible/workload.yaml`, uri module with
 * until/retries) and as a Fleetbook playbook run by the CLI (`fleetbook run`, compiled: `npm run
 * build` first). Both are whole processes timed from the command line. Figure: the ratio of wall
 * times (Ansible / Fleetbook). Fleetbook runs twice: at its default pace (600 requests a minute
 * for the private-cloud group, which publishes no limit) and with a profile declaring a generous
 * limit; each is also given as a ratio to its lower bound (the requests at that pace, plus the
 * 2 s of the last precheck). Ansible comes from Debian's packages: installed with apt-get when
 * missing (as root); without it only Fleetbook's figures are printed, saying why.
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

const ansibleMissing = hasAnsible() ? undefined : installAnsible();
/** Requests a minute of the declared generous limit (fleetbook.yaml, profile `generous`). */
const GENEROUS_PER_MINUTE = 60_000;
/** Fleetbook's pace for groups without a published limit (the private-cloud group). */
const DEFAULT_PER_MINUTE = 600;
const OPERATION_MS = 2000;

/**
 * The least time the workload can take at `perMinute`: its GETs and precheck POSTs (polls not
 * counted) after the first burst (a sixtieth of the limit, as the client allows), then the last
 * precheck's 2 s.
 */
const lowerBoundMs = (perMinute: number): number =>
  (Math.max(0, READS + OPERATIONS - Math.ceil(perMinute / 60)) * 60_000) / perMinute + OPERATION_MS;

/** Wall time of a command in ms; throws with its output when it fails. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): number {
  const started = performance.now();
  const result = spawnSync(command, args, { env, cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const elapsed = performance.now() - started;
  if (result.status !== 0)
    throw new Error(
      `${command} exited ${String(result.status)}:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`,
    );
  return elapsed;
}

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-ansible-'));
const sim = await startSimulatorProcess({
  // About a third of the world's systems can take the 2.4.0 prechecks: 240 give the 3 × 20 needed.
  world: { privateCloud: { systems: 240, failures: [] } },
  timeScale: TIME_SCALE,
});
try {
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin')!;
  const fleet = await listFleet(createBenchClient(sim));
  const online = fleet.filter((system) => system.state === 'ONLINE');
  const eligible = online.filter((system) => system.updateSupported && system.offers('2.4.0'));
  const pick = (system: { id: string; region: string }) => ({ id: system.id, region: system.region });
  const reads = Array.from({ length: READS }, (_, i) => pick(online[i % online.length]!));
  // Each side gets systems of its own for the prechecks (a system runs one operation at a time).
  if (eligible.length < 3 * OPERATIONS)
    throw new Error(`only ${eligible.length} systems can run prechecks, ${3 * OPERATIONS} needed`);
  const prechecksOf = (side: number) => eligible.slice(side * OPERATIONS, (side + 1) * OPERATIONS).map(pick);

  let ansibleMs: number | undefined;
  if (ansibleMissing === undefined) {
    const ansibleVars = join(dir, 'ansible-vars.json');
    writeFileSync(
      ansibleVars,
      JSON.stringify({
        sim: sim.url,
        client_id: admin.clientId,
        client_secret: admin.clientSecret,
        reads,
        prechecks: prechecksOf(0),
      }),
    );
    ansibleMs = timed(
      'ansible-playbook',
      ['-i', 'localhost,', join(rootDir, 'bench', 'ansible', 'workload.yaml'), '-e', `@${ansibleVars}`],
      {
        ...process.env,
        ANSIBLE_HOST_KEY_CHECKING: 'False',
        ANSIBLE_LOCALHOST_WARNING: 'False',
        ANSIBLE_INVENTORY_UNPARSED_WARNING: 'False',
      },
    );
  }

  writeFileSync(
    join(dir, 'fleetbook.yaml'),
    `profiles:\n  generous:\n    rateLimits: { defaultPerMinute: ${GENEROUS_PER_MINUTE} }\n`,
  );
  const fleetbook = (side: number, profile: string[]): number => {
    const inputs = join(dir, `fleetbook-inputs-${side}.json`);
    writeFileSync(inputs, JSON.stringify({ reads, prechecks: prechecksOf(side) }));
    return timed(
      process.execPath,
      [
        join(rootDir, 'bin', 'fleetbook.js'),
        'run',
        join(rootDir, 'bench', 'playbooks', 'ansible-workload.yaml'),
        '--inputs',
        inputs,
        '--json',
        ...profile,
      ],
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
      dir,
    );
  };
  const defaultMs = fleetbook(1, []);
  const generousMs = fleetbook(2, ['--profile', 'generous']);
  const seconds = (value: number): string => `${(value / 1000).toFixed(1)} s`;
  const paced = (label: string, measuredMs: number, perMinute: number): string =>
    `Fleetbook at ${label} (${perMinute}/min) ${seconds(measuredMs)}, ${(measuredMs / lowerBoundMs(perMinute)).toFixed(2)}× its lower bound of ${seconds(lowerBoundMs(perMinute))}`;
  printFigures(
    '8 against-ansible',
    `${READS} GETs + ${OPERATIONS} prechecks followed to their end (2 s each): ` +
      `${paced('the default pace', defaultMs, DEFAULT_PER_MINUTE)}; ${paced('a declared generous limit', generousMs, GENEROUS_PER_MINUTE)}; ` +
      (ansibleMs === undefined
        ? `Ansible skipped: not installed and cannot be (${ansibleMissing ?? ''})`
        : `Ansible ${seconds(ansibleMs)}, ratio Ansible/Fleetbook ${(ansibleMs / defaultMs).toFixed(1)}× at the default pace, ${(ansibleMs / generousMs).toFixed(1)}× with the generous limit`),
    [],
  );
} finally {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
