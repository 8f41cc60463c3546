/**
 * `npm run bench`: every benchmark in turn, each in a process of its own (so one's memory and
 * timers never touch another's), their output relayed, then the summary of the final lines.
 * `--quick` passes on to each (smaller workloads); `--only 1,4` runs a selection. A full run
 * (not quick, not a selection) rewrites the figures of bench/results.md (between its figures
 * markers, so the findings written below them stay) with the date and machine.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { quick, rootDir } from './lib/harness.js';

const BENCHMARKS = [
  '1-engine-overhead.ts',
  '2-rate-limit-throughput.ts',
  '3-polling-economy.ts',
  '4-rolling-update-makespan.ts',
  '5-concurrent-waits-memory.ts',
  '6-streaming-download.ts',
  '7-startup.ts',
  '8-against-ansible.ts',
  '9-team-rate-limit.ts',
  '10-worker-takeover.ts',
  '11-two-leaders.ts',
  '12-journal-append-postgres.ts',
  'simulator-throughput.ts',
  '14-validation-scaling.ts',
  '15-fleet-10k.ts',
  '16-server.ts',
  '17-validate-inference.ts',
  '18-plan.ts',
];

const onlyAt = process.argv.indexOf('--only');
const only = onlyAt < 0 ? undefined : (process.argv[onlyAt + 1] ?? '').split(',');
const selected = only ? BENCHMARKS.filter((file) => only.some((prefix) => file.startsWith(prefix))) : BENCHMARKS;

/** Runs one benchmark; resolves with its last line (or why it failed). */
async function runOne(file: string): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(rootDir, 'bench', file), ...(quick ? ['--quick'] : [])],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let last = '';
  for await (const line of createInterface({ input: child.stdout })) {
    console.log(line);
    if (line.trim()) last = line;
  }
  const code: number | null = child.exitCode ?? (await new Promise((resolve) => child.once('exit', resolve)));
  return code === 0 ? last : `[${file}] FAILED (exit ${String(code)})${last ? `: ${last}` : ''}`;
}

const started = performance.now();
const loadBefore = loadavg()[0]!;
const lines: string[] = [];
for (const file of selected) {
  console.log(`\n== ${file}`);
  lines.push(await runOne(file));
}
const minutes = (performance.now() - started) / 60_000;
const machine = `${cpus().length} cores (nproc), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}, load average ${loadBefore.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end`;
console.log(`\n== summary (${minutes.toFixed(1)} min; ${machine})`);
for (const line of lines) console.log(line);

const BEGIN = '<!-- figures: written by npm run bench -->';
const END = '<!-- /figures -->';
if (!quick && !only) {
  const file = join(rootDir, 'bench', 'results.md');
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const figures =
    `${BEGIN}\nWritten by \`npm run bench\` (a full run) on ${date} UTC, in ${minutes.toFixed(1)} min.\n` +
    `Machine: ${machine}. The machine is shared: compare the ratios, not the absolute times (see README.md).\n\n` +
    lines.map((line) => `- ${line}`).join('\n') +
    `\n${END}`;
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const [before, rest] =
    previous.includes(BEGIN) && previous.includes(END)
      ? [previous.split(BEGIN)[0]!, previous.split(END)[1]!]
      : ['# Benchmark results\n\n', '\n'];
  writeFileSync(file, `${before}${figures}${rest}`);
}
if (lines.some((line) => line.includes('FAILED'))) process.exitCode = 1;
