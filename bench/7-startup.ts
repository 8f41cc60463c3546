/**
 * Benchmark 7, start-up: `fleetbook validate` on every bundled playbook (the compiled CLI,
 * `npm run build` first) against `node -e ''`, each run R times one after the other (R = 5);
 * figures: the medians and their ratio. No target: the figure says what the CLI adds to Node's
 * own start.
 * Run alone: npx tsx bench/7-startup.ts [--quick]
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ms, printFigures, quick, rootDir } from './lib/harness.js';

const runs = quick ? 3 : 5;
const playbooks = readdirSync(join(rootDir, 'playbooks'))
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => join(rootDir, 'playbooks', name));
const cli = join(rootDir, 'bin', 'fleetbook.js');

function medianMs(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    execFileSync(process.execPath, args, { stdio: 'ignore' });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

// Interleaved warm-up of both, so neither profits alone from a warm file cache.
medianMs(['-e', '']);
const nodeMs = medianMs(['-e', '']);
const validateMs = medianMs([cli, 'validate', ...playbooks]);
printFigures(
  '7 startup',
  `fleetbook validate of ${playbooks.length} bundled playbooks: median ${ms(validateMs)}; node -e '': median ${ms(nodeMs)} (${runs} runs each); ratio ${(validateMs / nodeMs).toFixed(1)}×`,
  [],
);
