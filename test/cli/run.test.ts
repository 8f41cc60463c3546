import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { jsonLines, runCli } from '../support/cli.js';
import { spawnCli } from '../support/spawn-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-run-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[], env: NodeJS.ProcessEnv = {}, tty = false) {
  const outcome = await runCli(['run', ...args], { env: { FLEETBOOK_HOME: join(dir, 'home'), ...env }, tty });
  return { ...outcome, lines: tty ? [] : jsonLines(outcome.stdout) };
}

function playbookFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const simulator = ['--target', 'simulator', '--time-scale', '6000'];

const precheck = `name: precheck-first
inputs:
  catalogVersion: { type: string, default: "2.4.0" }
  token: { type: string, secret: true, default: "none" }
defaults:
  wait: { minPoll: 10ms }
steps:
  - id: catalog
    call: privateCloud.listSoftwareCatalogs
    with: { filter: "version eq '\${{ inputs.catalogVersion }}'" }
  - id: note
    log: "using token \${{ inputs.token }}"
  - id: precheck
    call: privateCloud.runSoftwarePrechecks
    with:
      id: "\${{ steps.catalog.outputs.body.items[0].systemsWithUpdatePath[0].id }}"
      body: { catalogVersion: "\${{ inputs.catalogVersion }}" }
    wait: { timeout: 10m }
outputs:
  state: \${{ steps.precheck.outputs.operation.state }}
`;

describe('fleetbook run', () => {
  it.each([
    [['-i', 'toString=1'], "unknown input 'toString'"],
    [['-i', 'constructor=1'], "unknown input 'constructor'"],
    [['-i', '__proto__={"name":"x"}'], "unknown input '__proto__'"],
  ])('-i %j is an unknown input like any other name (exit 2), never a declared one', async (flags, message) => {
    const file = playbookFile(
      'named.yaml',
      'name: named\ninputs:\n  name: { type: string }\nsteps:\n  - log: "hi ${{ inputs.name }}"\n',
    );
    const result = await run([file, ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    // `__proto__` does not set `name` through the prototype: it is still missing.
    expect(result.stderr).toContain("input 'name' (string) is required");
  });

  it("refuses to start while another run holds the playbook's lock (exit 1, naming the holder)", async () => {
    const file = playbookFile('locked.yaml', 'name: locked\nlock: fleet-software\nsteps:\n  - log: hello\n');
    const store = await openRunStore({ env: { FLEETBOOK_HOME: join(dir, 'home') } });
    expect(await store.acquireLease('lock:fleet-software', 'run-elsewhere', 60_000)).toBe(true);
    await store.close();
    const { code, stderr } = await run([file, ...simulator, '--json']);
    expect(code).toBe(1);
    expect(stderr).toContain("Run run-elsewhere holds lock 'fleet-software'; this run did not start.");
  });

  it('runs a playbook against the embedded simulator: JSON lines, outputs, exit 0, secrets redacted', async () => {
    const file = playbookFile('precheck.yaml', precheck);
    const secret = 'tok-5ecret-value-981';
    const { code, lines, stdout, stderr } = await run([file, ...simulator, '--json', '-i', `token=${secret}`]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = lines.at(-1)?.result as {
      status: string;
      outputs: unknown;
      runId: string;
      steps: Array<{ path: string; status: string }>;
    };
    expect(result).toMatchObject({ status: 'succeeded', outputs: { state: 'SUCCEEDED' } });
    expect(result.steps.map((step) => [step.path, step.status])).toEqual([
      ['catalog', 'succeeded'],
      ['note', 'succeeded'],
      ['precheck', 'succeeded'],
    ]);
    const answered = lines.find((line) => line.stepId === 'precheck' && line.httpStatus === 202);
    expect(answered).toMatchObject({
      runId: result.runId,
      playbook: 'precheck-first',
      operationId: 'privateCloud.runSoftwarePrechecks',
      attempt: 1,
    });
    expect(
      lines.some(
        (line) => line.stepId === 'precheck' && typeof line.durationMs === 'number' && line.status === 'succeeded',
      ),
    ).toBe(true);
    expect(stdout).not.toContain(secret);
    expect(stdout).not.toContain('sim-admin-secret');
    expect(stdout).toContain('using token [REDACTED]');
  });

  it('prints the request a dry run would write and marks the step simulated', async () => {
    const file = playbookFile('precheck.yaml', precheck);
    const { code, lines } = await run([file, ...simulator, '--json', '--dry-run']);
    expect(code).toBe(0);
    const result = lines.at(-1)?.result as { simulatedSteps: string[]; steps: Array<{ path: string; status: string }> };
    expect(result.simulatedSteps).toEqual(['precheck']);
    expect(lines.find((line) => line.dryRun === true && line.stepId === 'precheck')).toMatchObject({
      request: { method: 'POST', body: { catalogVersion: '2.4.0' } },
    });
  });

  it('shows on a terminal each write a dry run did not send: method, URL, headers and body, secrets redacted, big bodies cut', async () => {
    const secret = 'hook-5ecret-value-642';
    const file = playbookFile(
      'dry.yaml',
      `${precheck.replace('outputs:\n  state: ${{ steps.precheck.outputs.operation.state }}\n', '')}  - id: notify
    http:
      url: https://hooks.example.test/fleet
      headers: { x-hook-key: "\${{ inputs.token }}" }
      body: { text: "token \${{ inputs.token }}", systems: "\${{ [1..400].('system-' & $string($)) }}" }
`,
    );
    const { code, stdout } = await run([file, ...simulator, '--dry-run', '-i', `token=${secret}`], {}, true);
    expect(code).toBe(0);
    expect(stdout).not.toContain(secret);
    // The small body of the write is pretty printed under its line, after the headers that matter.
    expect(stdout).toMatch(
      /INFO  precheck  dry run: POST http:\/\/\S+\/systems\/\S+ not sent\n {4}content-type: application\/json\n {4}body:\n {6}\{\n {8}"catalogVersion": "2\.4\.0"\n {6}\}\n/,
    );
    // The big one is compact and cut, saying how much was left out; the secret header and text are redacted.
    expect(stdout).toMatch(
      /INFO  notify  dry run: POST https:\/\/hooks\.example\.test\/fleet not sent\n {4}x-hook-key: \[REDACTED\]\n {4}content-type: application\/json\n {4}body: \{"text":"token \[REDACTED\]","systems":\["system-1","system-2",.*… \(\d+ more characters\)\n/,
    );
    expect(stdout).not.toContain('system-400');
    expect(stdout).toMatch(/Dry run: not sent: precheck, notify/);
  });

  it('shows a terminal readable lines with progress and a summary of every step, and writes JSON to --log-file', async () => {
    const file = playbookFile('precheck.yaml', precheck);
    const logFile = join(dir, 'run.log');
    const { code, stdout } = await run([file, ...simulator, '--log-file', logFile], {}, true);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Running precheck-first \(run [0-9a-f-]+\) against the embedded simulator/);
    expect(stdout).toMatch(/INFO  precheck  privateCloud\.runSoftwarePrechecks: \d+% \[#*\.*\]/);
    expect(stdout).toMatch(/Run [0-9a-f-]+ succeeded in/);
    expect(stdout).toMatch(/STATUS\s+DURATION\s+ATTEMPTS\s+STEP/);
    expect(stdout).toMatch(/succeeded\s+\d+(\.\d)? m?s\s+1\s+precheck/);
    expect(stdout).toContain('"state": "SUCCEEDED"');
    const logged = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.some((line) => line.stepId === 'precheck' && typeof line.progressPercent === 'number')).toBe(true);
  });

  it('ends with exit 1 when the run fails', async () => {
    const file = playbookFile('fails.yaml', 'name: fails\nsteps:\n  - id: stop\n    fail: "nothing to do"\n');
    const { code, lines } = await run([file, ...simulator, '--json']);
    expect(code).toBe(1);
    expect(lines.at(-1)?.result).toMatchObject({ status: 'failed', error: { message: 'nothing to do' } });
  });

  it('refuses an invalid playbook with located problems and exit 2', async () => {
    const file = playbookFile('bad.yaml', 'name: bad\nsteps:\n  - id: one\n    call: privateCloud.listSystemz\n');
    const { code, stderr, stdout } = await run([file, ...simulator, '--json']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad\.yaml:4:11 {2}error {2}unknown operation 'privateCloud\.listSystemz'/);
    expect(stderr).toMatch(/listSystems/);
    expect(stdout).toBe('');
  });

  it('connects through the FLEETBOOK_* variables to a separately started simulator', async () => {
    const { startSimulator } = await import('../../src/simulator/index.js');
    const sim = await startSimulator({ port: 0, timeScale: 6000 });
    try {
      const file = playbookFile(
        'systems.yaml',
        'name: systems\nsteps:\n  - id: list\n    call: privateCloud.listSystems\noutputs:\n  total: ${{ steps.list.outputs.body.total }}\n',
      );
      const env = {
        FLEETBOOK_CLIENT_ID: 'sim-observer',
        FLEETBOOK_CLIENT_SECRET: 'sim-observer-secret',
        FLEETBOOK_AUTH_URL: sim.authUrl,
        FLEETBOOK_BASE_URL: sim.baseUrl,
        FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
        FLEETBOOK_REGION: 'eu-west',
      };
      const { code, lines, stdout } = await run([file, '--json'], env);
      expect(code).toBe(0);
      expect(lines.at(-1)?.result).toMatchObject({ status: 'succeeded', outputs: { total: expect.any(Number) } });
      expect(sim.control.requests({ operationId: 'privateCloud.listSystems' })).toMatchObject([
        { clientId: 'sim-observer', region: 'eu-west', status: 200 },
      ]);
      expect(stdout).not.toContain('sim-observer-secret');
    } finally {
      await sim.close();
    }
  });

  it('names --target simulator when no platform is configured', async () => {
    const file = playbookFile('fails.yaml', 'name: fails\nsteps:\n  - id: stop\n    fail: "x"\n');
    const { code, stderr } = await run([file]);
    expect(code).toBe(2);
    expect(stderr).toContain('FLEETBOOK_CLIENT_ID');
    expect(stderr).toContain('--target simulator');
  });

  it('names a missing required input with exit 2', async () => {
    const file = playbookFile(
      'needs.yaml',
      'name: needs\ninputs:\n  count: { type: integer }\nsteps:\n  - id: show\n    log: "${{ inputs.count }}"\n',
    );
    const missing = await run([file, ...simulator, '--json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("input 'count' (integer) is required");
    const given = await run([file, ...simulator, '--json', '-i', 'count=3']);
    expect(given.code).toBe(0);
  });
});

describe('fleetbook run in a process of its own', () => {
  it('stops on SIGTERM: no new step starts, the run is interrupted, exit 130', async () => {
    const file = playbookFile(
      'long.yaml',
      'name: long\nsteps:\n  - id: nap\n    sleep: 1h\n  - id: after\n    log: "never"\n',
    );
    const cli = spawnCli(['run', file, '--target', 'simulator', '--json'], { FLEETBOOK_HOME: join(dir, 'home') });
    await cli.waitFor('step nap started');
    expect(await cli.signal('SIGTERM')).toBe(130);
    const stdout = cli.stdout();
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)?.result).toMatchObject({
      status: 'interrupted',
      steps: [
        { path: 'nap', status: 'interrupted' },
        { path: 'after', status: 'notStarted' },
      ],
    });
  });
});
