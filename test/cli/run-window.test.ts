/**
 * `fleetbook run` and the playbook's maintenance window: refused outside it or inside a freeze
 * (exit 2, saying when it opens), started with `--ignore-window` (recorded in the run), and a
 * dry run not refused (it says so). The windows are placed relative to now, so they are closed
 * whenever the test runs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { WEEKDAYS } from '../../src/windows/index.js';
import { jsonLines, runCli } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-run-window-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ FLEETBOOK_HOME: join(dir, 'home') });
const simulator = ['--target', 'simulator', '--time-scale', '6000'];
const DAY = 86_400_000;
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
// Midnight (UTC) three days from now: a window of that weekday, 00:00–01:00 UTC, is closed now and opens then.
const opening = Math.floor(Date.now() / DAY) * DAY + 3 * DAY;

function playbookFile(limits: string): string {
  const file = join(dir, 'windowed.yaml');
  writeFileSync(file, `name: windowed\n${limits}steps:\n  - id: hello\n    log: hello\n`);
  return file;
}

const outsideWindow = () =>
  playbookFile(
    `window: { timezone: UTC, weekly: [{ days: [${WEEKDAYS[new Date(opening).getUTCDay()]}], from: "00:00", to: "01:00" }] }\n`,
  );

describe('fleetbook run and the maintenance window', () => {
  it('refuses a run outside the window with exit 2 and when it opens next', async () => {
    const { code, stderr, stdout } = await runCli(['run', outsideWindow(), ...simulator, '--json'], { env: env() });
    expect(code).toBe(2);
    expect(stderr).toContain(
      `windowed may not start now: outside the maintenance window; it opens next at ${dateOf(opening)} 00:00 UTC (${new Date(opening).toISOString()}). Run it then, or now with --ignore-window.`,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toBe('');
    const store = await openRunStore({ env: env() });
    expect(await store.listRuns()).toEqual([]);
    await store.close();
  });

  it('refuses a run inside a freeze, naming it', async () => {
    const file = playbookFile(
      `freeze: [{ from: ${dateOf(Date.now() - DAY)}, to: ${dateOf(Date.now() + DAY)}, reason: release freeze }]\n`,
    );
    const { code, stderr } = await runCli(['run', file, ...simulator], { env: env() });
    expect(code).toBe(2);
    expect(stderr).toContain(
      `inside the freeze ${dateOf(Date.now() - DAY)}..${dateOf(Date.now() + DAY)} (release freeze); it opens next at ${dateOf(Date.now() + 2 * DAY)} 00:00 UTC`,
    );
  });

  it('starts with --ignore-window, says so and records it in the run', async () => {
    const { code, stdout } = await runCli(['run', outsideWindow(), ...simulator, '--json', '--ignore-window'], {
      env: env(),
    });
    expect(code).toBe(0);
    const lines = jsonLines(stdout);
    expect(lines.find((line) => line.event === 'run.outsideWindow')).toMatchObject({ ignoreWindow: true });
    const store = await openRunStore({ env: env() });
    const [run] = await store.listRuns();
    await store.close();
    expect(run?.status).toBe('succeeded');
    expect(run?.trigger).toMatchObject({ kind: 'manual' });
    expect(run?.trigger.ignoredWindow).toContain('outside the maintenance window; it opens next at');
  });

  it('does not refuse a dry run, and says a real run would be', async () => {
    const { code, stdout } = await runCli(['run', outsideWindow(), ...simulator, '--dry-run'], {
      env: env(),
      tty: true,
    });
    expect(code).toBe(0);
    expect(stdout).toContain('dry run of windowed outside its maintenance window');
    expect(stdout).toContain('a real run would be refused now');
  });
});
