// `npm start` builds only when dist/ is older than its sources: scripts/build-if-stale.js
// decides, here on project folders of a test's own (`--root`, `--check`: the decision alone).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/build-if-stale.js');
const BUILT_AT = new Date('2026-03-01T10:00:00Z');
const BEFORE = new Date('2026-03-01T09:00:00Z');
const AFTER = new Date('2026-03-01T11:00:00Z');

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'fleetbook-build-if-stale-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Writes `path` (under the project) with the modification time `at`. */
function file(path: string, at: Date): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, 'x\n');
  utimesSync(full, at, at);
}

/** A project whose last build (its stamp) came after every source. */
function builtProject(): void {
  for (const path of [
    'src/cli/main.ts',
    'src/simulator/server.ts',
    'schemas/openapi/platform.yaml',
    'tsconfig.json',
    'tsconfig.build.json',
    'package.json',
    'scripts/build-artifacts.js',
    'dist/cli/main.js',
  ])
    file(path, BEFORE);
  file('dist/.build-stamp', BUILT_AT);
}

async function check(): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT, '--check', '--root', root]);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '' };
  }
}

describe('build-if-stale (npm start)', () => {
  it('is what `npm start` runs before the demo', () => {
    const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.start).toBe('node scripts/build-if-stale.js && node bin/fleetbook.js demo');
  });

  it('does not build what the last build (npm install) already built', async () => {
    builtProject();
    expect(await check()).toEqual({ code: 0, stdout: 'up to date\n' });
  });

  it('builds a dist/ that never finished a build', async () => {
    builtProject();
    rmSync(join(root, 'dist/.build-stamp'));
    expect(await check()).toEqual({
      code: 1,
      stdout: 'stale: dist/.build-stamp is missing: dist/ was never built to the end\n',
    });
  });

  it.each([
    ['a source', 'src/simulator/server.ts'],
    ['a new source', 'src/cli/saved-world.ts'],
    ['the platform description', 'schemas/openapi/platform.yaml'],
    ['the build configuration', 'tsconfig.build.json'],
    ['the build script', 'scripts/build-artifacts.js'],
  ])('builds when %s changed after the build', async (_what, path) => {
    builtProject();
    file(path, AFTER);
    expect(await check()).toEqual({ code: 1, stdout: `stale: ${path} is newer than dist/\n` });
  });

  it('does not build for a test edited after the build (the build leaves tests out)', async () => {
    builtProject();
    file('src/cli/main.test.ts', AFTER);
    file('src/engine/engine.test-kit.ts', AFTER);
    expect(await check()).toEqual({ code: 0, stdout: 'up to date\n' });
  });
});
