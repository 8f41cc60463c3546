/**
 * Ctrl-C in a terminal sends SIGINT: the run must end as it does on SIGTERM (no new step,
 * the wait abandoned, exit 130, the run interrupted) and stay resumable.
 */
import { spawnCli } from '../support/spawn-cli.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { jsonLines, runCli } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-sigint-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// The nap's length comes from the environment, so the resumed run (same playbook, same hash) naps briefly.
const playbook = `name: napping
steps:
  - id: before
    log: "before the nap"
  - id: nap
    sleep: \${{ env.FLEETBOOK_VAR_NAP }}
  - id: after
    log: "after the nap"
`;

describe('SIGINT', () => {
  it('ends the run interrupted with exit 130, and fleetbook resume finishes it without running again what succeeded', async () => {
    const file = join(dir, 'napping.yaml');
    writeFileSync(file, playbook);
    const home = join(dir, 'home');
    const cli = spawnCli(['run', file, '--target', 'simulator', '--json'], {
      FLEETBOOK_HOME: home,
      FLEETBOOK_VAR_NAP: '1h',
    });
    await cli.waitFor('step nap started');
    expect(await cli.signal('SIGINT')).toBe(130);
    const stdout = cli.stdout();
    const lines = jsonLines(stdout);
    expect(lines.some((line) => line.signal === 'SIGINT' && line.level === 40)).toBe(true);
    const result = lines.at(-1)?.result as { runId: string };
    expect(lines.at(-1)?.result).toMatchObject({
      status: 'interrupted',
      steps: [
        { path: 'before', status: 'succeeded' },
        { path: 'nap', status: 'interrupted' },
        { path: 'after', status: 'notStarted' },
      ],
    });
    const store = await openRunStore({ env: { FLEETBOOK_HOME: home } });
    try {
      expect((await store.getRun(result.runId))?.status).toBe('interrupted');
    } finally {
      await store.close();
    }

    const resumed = await runCli(['resume', result.runId, '--target', 'simulator', '--json'], {
      env: { FLEETBOOK_HOME: home, FLEETBOOK_VAR_NAP: '10ms' },
    });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const resumedLines = jsonLines(resumed.stdout);
    expect(resumedLines.at(-1)?.result).toMatchObject({
      status: 'succeeded',
      steps: [
        { path: 'before', status: 'succeeded' },
        { path: 'nap', status: 'succeeded' },
        { path: 'after', status: 'succeeded' },
      ],
    });
    const messages = resumedLines.filter((line) => line.playbookLog === true).map((line) => line.msg);
    expect(messages).toEqual(['after the nap']);
  });
});
