// `npm start` builds only when dist/ is older than what it is built from: `npm install` has just
// built it (`prepare`), and a second build costs about 40 s for nothing.
//
// Stale when dist/ has no stamp of a finished build (`dist/.build-stamp`, written last by
// scripts/build-artifacts.js) or when a file it is built from is newer than that stamp: under
// src/ (tests aside, as tsconfig.build.json leaves them out), schemas/, or the build's own
// configuration (tsconfig*.json, package.json, scripts/build-artifacts.js). A build that failed
// half-way wrote no new stamp, so the next start builds again.
//
//   node scripts/build-if-stale.js            build when stale (`npm run build`), then exit 0
//   node scripts/build-if-stale.js --check    exit 0 when up to date, 1 when stale (saying why)
//   --root <dir>                              the project folder (default: this script's parent)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAMP = join('dist', '.build-stamp');
const SOURCE_DIRS = ['src', 'schemas'];
const BUILD_CONFIGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json', join('scripts', 'build-artifacts.js')];
const NOT_BUILT = /\.test(-kit)?\.ts$/;

/** The newest file under `dir` (recursively) as `{ path, mtimeMs }`, or undefined when there is none. */
function newestUnder(dir) {
  let newest;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const found = entry.isDirectory()
      ? newestUnder(path)
      : NOT_BUILT.test(entry.name)
        ? undefined
        : { path, mtimeMs: statSync(path).mtimeMs };
    if (found && (!newest || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

function mtimeOf(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Why `root`'s dist/ must be built again, or undefined when it is up to date. */
export function staleness(root) {
  const built = mtimeOf(join(root, STAMP));
  if (built === undefined) return `${STAMP} is missing: dist/ was never built to the end`;
  const candidates = [
    ...SOURCE_DIRS.map((dir) => newestUnder(join(root, dir))),
    ...BUILD_CONFIGS.map((file) => ({ path: join(root, file), mtimeMs: mtimeOf(join(root, file)) })),
  ].filter((found) => found && found.mtimeMs !== undefined);
  const newest = candidates.reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a), { path: '', mtimeMs: -Infinity });
  return newest.mtimeMs > built ? `${relative(root, newest.path)} is newer than dist/` : undefined;
}

function main(args) {
  const at = args.indexOf('--root');
  const root = at >= 0 ? resolve(args[at + 1] ?? '.') : resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const reason = staleness(root);
  if (args.includes('--check')) {
    process.stdout.write(reason ? `stale: ${reason}\n` : 'up to date\n');
    return reason ? 1 : 0;
  }
  if (!reason) return 0;
  process.stderr.write(`Building first: ${reason}\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  return build.status ?? 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
