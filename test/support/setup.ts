/**
 * Runs in every test file (vitest `setupFiles`): the per-file half of the suite's secret scan
 * (see `leak-scan.ts`). A folder or file under the suite folder is scanned as it is deleted,
 * since most tests remove their temp dirs before the global teardown could see them; the
 * in-memory captures are scanned when the file ends. A leak fails the file with `file:line`.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';
import { afterAll } from 'vitest';
import { formatLeaks, removalLeaks, scanCaptures, scanPath, SUITE_DIR_ENV } from './leak-scan.js';

const WRAPPED = Symbol.for('fleetbook.test.rmWrapped');
const holder = globalThis as typeof globalThis & { [WRAPPED]?: true };

/** Scans `path` when it lies under the suite folder (a test's temp dir), before it is removed. */
function scanBeforeRemoval(path: fs.PathLike): void {
  const suite = process.env[SUITE_DIR_ENV];
  if (!suite) return;
  const target = resolve(String(path));
  if (!target.startsWith(suite + sep)) return;
  removalLeaks().push(...scanPath(target, suite));
}

// Each test file re-runs this module (isolated module graphs) in a worker that lives on:
// the fs functions are wrapped once per process.
if (!holder[WRAPPED]) {
  holder[WRAPPED] = true;
  const { rmSync, rm } = fs;
  const rmPromise = fs.promises.rm;
  fs.rmSync = (path, options) => {
    scanBeforeRemoval(path);
    rmSync(path, options);
  };
  fs.rm = ((path: fs.PathLike, ...rest: unknown[]) => {
    scanBeforeRemoval(path);
    (rm as (...args: unknown[]) => void)(path, ...rest);
  }) as typeof fs.rm;
  fs.promises.rm = async (path, options) => {
    scanBeforeRemoval(path);
    return rmPromise(path, options);
  };
  // `import { rmSync } from 'node:fs'` in a test reads the ES module's bindings: bring them in line.
  syncBuiltinESMExports();
}

afterAll(() => {
  const leaks = [...removalLeaks().splice(0), ...scanCaptures()];
  if (leaks.length > 0) throw new Error(formatLeaks(leaks));
});
