/**
 * vitest `globalSetup`: one suite folder for everything the tests write. TMPDIR points at it,
 * so every `mkdtemp(tmpdir())` of a worker or of a child process it starts lands there, and
 * so does a FLEETBOOK_HOME no test chose. The teardown scans what is left (what the tests did
 * not delete themselves; `setup.ts` scans what they did) and fails the run on a leak.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatLeaks, scanPath, SUITE_DIR_ENV } from './leak-scan.js';

export default function setup(): () => void {
  const suite = realpathSync(mkdtempSync(join(tmpdir(), 'fleetbook-suite-')));
  const saved = { TMPDIR: process.env.TMPDIR, FLEETBOOK_HOME: process.env.FLEETBOOK_HOME };
  process.env[SUITE_DIR_ENV] = suite;
  process.env.TMPDIR = suite;
  process.env.FLEETBOOK_HOME = join(suite, 'home');
  return () => {
    // tsx's compile cache holds the tests' own source (whose literals are the secrets), not output.
    const leaks = readdirSync(suite)
      .filter((name) => !/^tsx-\d+$/.test(name))
      .flatMap((name) => scanPath(join(suite, name), suite));
    rmSync(suite, { recursive: true, force: true });
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    delete process.env[SUITE_DIR_ENV];
    if (leaks.length > 0) {
      // vitest only prints an error thrown at close: the exit code is set here so the run fails.
      process.exitCode = 1;
      throw new Error(formatLeaks(leaks));
    }
  };
}
