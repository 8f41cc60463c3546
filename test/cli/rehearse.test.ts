/**
 * Rehearsing with `fleetbook run --target simulator`: the embedded simulator takes a world
 * file, a fault file and a seed, as `fleetbook simulate` does; against a real account those
 * options (and --time-scale) are refused rather than silently ignored.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-rehearse-'));
  env = { FLEETBOOK_HOME: join(dir, 'home') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const playbook = (): string => {
  const file = join(dir, 'ids.yaml');
  writeFileSync(
    file,
    'name: ids\nsteps:\n  - id: systems\n    call: privateCloud.listSystems\n    with: { limit: 100 }\n    retry: { maxAttempts: 2, initialDelay: 1ms, maxDelay: 1ms }\noutputs:\n  ids: ${{ steps.systems.outputs.body.items.id[] }}\n',
  );
  return file;
};

async function rehearse(...args: string[]) {
  const outcome = await runCli(
    ['run', playbook(), '--target', 'simulator', '--time-scale', '6000', '-o', 'json', ...args],
    { env },
  );
  const result = jsonLines(outcome.stdout).at(-1)?.result as
    { status: string; outputs?: { ids: string[] }; error?: { message: string } } | undefined;
  return { ...outcome, result };
}

describe('fleetbook run --target simulator --world/--faults/--seed', () => {
  it('--seed picks the generated world, as simulate --seed does; a world file gives its own seed', async () => {
    const one = await rehearse('--seed', '1');
    const seven = await rehearse('--seed', '7');
    expect(one.code).toBe(0);
    expect(seven.result?.outputs?.ids).not.toEqual(one.result?.outputs?.ids);
    expect((await rehearse('--seed', '7')).result?.outputs?.ids).toEqual(seven.result?.outputs?.ids);
    const world = join(dir, 'world.yaml');
    writeFileSync(world, 'seed: 7\n');
    expect((await rehearse('--world', world)).result?.outputs?.ids).toEqual(seven.result?.outputs?.ids);
  });

  it('--faults rehearses a failure path: the listing answers 503 and the run fails, exit 1', async () => {
    const faults = join(dir, 'faults.yaml');
    writeFileSync(faults, 'rules:\n  - { route: privateCloud.listSystems, status: 503 }\n');
    const failed = await rehearse('--faults', faults);
    expect(failed.code).toBe(1);
    expect(failed.result?.status).toBe('failed');
    expect(failed.result?.error?.message).toMatch(/503/);
  });

  it('a world file that cannot be read is exit 2 before anything runs', async () => {
    const { code, stderr } = await rehearse('--world', join(dir, 'nope.yaml'));
    expect(code).toBe(2);
    expect(stderr).toContain('Cannot read the world file');
  });

  it('against a real account, --time-scale, --world, --faults and --seed are refused (exit 2), not ignored', async () => {
    const real = {
      ...env,
      FLEETBOOK_CLIENT_ID: 'id',
      FLEETBOOK_CLIENT_SECRET: 'secret',
      FLEETBOOK_AUTH_URL: 'http://127.0.0.1:9/auth',
      FLEETBOOK_BASE_URL: 'http://127.0.0.1:9',
      FLEETBOOK_REGIONAL_URL: 'http://127.0.0.1:9',
    };
    const timeScale = await runCli(['run', playbook(), '--time-scale', '600'], { env: real });
    expect(timeScale.code).toBe(2);
    expect(timeScale.stderr).toBe(
      'fleetbook: --time-scale applies only to the embedded simulator: add --target simulator, or leave it out to run against the platform the FLEETBOOK_* variables name.\n',
    );
    const several = await runCli(['run', playbook(), '--seed', '3', '--faults', 'f.yaml'], { env: real });
    expect(several.code).toBe(2);
    expect(several.stderr).toContain('--faults, --seed apply only to the embedded simulator');
  });
});
