/**
 * The live progress view of `fleetbook run` on a terminal: per loop, items done, failed and
 * running; per async operation, its percent; redrawn under the log lines and cleared at the
 * end. Forced here with FLEETBOOK_PROGRESS=live, as on a terminal.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-live-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ESC = '\u001b[';
const playbook = `name: live
defaults:
  wait: { minPoll: 10ms }
steps:
  - id: items
    forEach: "\${{ [1, 2, 3] }}"
    as: n
    tolerate: { failures: 1 }
    steps:
      - id: check
        if: \${{ n = 2 }}
        fail: "item \${{ n }} is bad"
  - id: catalog
    call: privateCloud.listSoftwareCatalogs
    with: { filter: "version eq '2.4.0'" }
  - id: precheck
    call: privateCloud.runSoftwarePrechecks
    with:
      id: "\${{ steps.catalog.outputs.body.items[0].systemsWithUpdatePath[0].id }}"
      body: { catalogVersion: "2.4.0" }
    wait: { timeout: 10m }
`;

async function run(env: NodeJS.ProcessEnv, ...args: string[]) {
  const file = join(dir, 'live.yaml');
  writeFileSync(file, playbook);
  return runCli(['run', file, '--target', 'simulator', '--time-scale', '600', ...args], {
    env: { FLEETBOOK_HOME: join(dir, 'home'), ...env },
  });
}

describe('live progress', () => {
  it('draws each loop (done, failed, running) and each operation (percent) under the log lines, then clears them', async () => {
    const { code, stdout } = await run({ FLEETBOOK_PROGRESS: 'live' }, '-o', 'text');
    expect(code).toBe(0);
    // The loop's last state, drawn when it ended.
    expect(stdout).toContain('  items  3/3 items: 2 done, 1 failed, 0 running\n');
    // The precheck's operation with its percent, as the journal records it.
    expect(stdout).toMatch(/ {2}precheck {2}operation \d+%\n/);
    // Each redraw first clears the lines drawn before.
    expect(stdout).toMatch(/\u001b\[\d+F\u001b\[J/);
    // Log lines still scroll above the view, and the summary follows once it is cleared.
    expect(stdout).toMatch(/INFO {2}precheck {2}privateCloud\.runSoftwarePrechecks: \d+%/);
    const summaryAt = stdout.indexOf('\nRun ');
    expect(stdout.slice(summaryAt)).not.toContain(ESC);
  });

  it('is not drawn off a terminal, in JSON, or with FLEETBOOK_PROGRESS=off', async () => {
    expect((await run({}, '-o', 'text')).stdout).not.toContain(ESC);
    expect((await run({ FLEETBOOK_PROGRESS: 'live' }, '-o', 'json')).stdout).not.toContain(ESC);
    const off = await runCli(['run', join(dir, 'live.yaml'), '--target', 'simulator', '--time-scale', '600'], {
      env: { FLEETBOOK_HOME: join(dir, 'home'), FLEETBOOK_PROGRESS: 'off' },
      tty: true,
    });
    expect(off.stdout).not.toContain('items: ');
  });
});
