/**
 * Benchmark 10, validation scaling: `loadPlaybook` (what `fleetbook validate` runs) on generated
 * valid playbooks of 256 KiB and 1 MiB (64 KiB and 256 KiB quick), each step a `set` whose
 * values read an input and the previous step, so the reference rule has a reference per step
 * to check. Figures: the times, the time per KiB of the larger against the smaller (linear
 * validation keeps it near 1; it was 2.0, 19 s for 1 MiB, when the reference rule copied its scope
 * per step), and
 * the peak RSS. Targets: the ratio ≤ 1.5, and a 1 MiB playbook in under 3 s (issue 15).
 * Run alone: npx tsx bench/14-validation-scaling.ts [--quick]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlaybook } from '../src/playbook/index.js';
import { ms, peakRssMB, printFigures, quick } from './lib/harness.js';

/** A valid playbook of about `bytes` bytes: `set` steps each reading an input and the step before. */
function largePlaybook(bytes: number): { text: string; steps: number } {
  const lines = ['name: large', 'inputs:', '  count: { type: integer, default: 3 }', 'steps:'];
  let length = lines.join('\n').length;
  let steps = 0;
  while (length < bytes - 200) {
    const previous = steps === 0 ? '' : `\${{ steps.s${steps - 1}.outputs.n }}`;
    const step = `  - id: s${steps}\n    set:\n      n: \${{ inputs.count + ${steps} }}\n      previous: "${previous}"`;
    lines.push(step);
    length += step.length + 1;
    steps += 1;
  }
  return { text: `${lines.join('\n')}\n`, steps };
}

/** Validate times of a playbook calling an unknown operation of 650 KB, and a misspelt one (median of 3 each). */
function unknownOperationTimes(dir: string): { long: number; short: number } {
  const time = (operation: string): number => {
    const file = join(dir, `call-${operation.length}.yaml`);
    writeFileSync(file, `name: unknown-operation\nsteps:\n  - id: s\n    call: ${operation}\n`);
    const times = [0, 1, 2].map(() => {
      const started = performance.now();
      const { problems } = loadPlaybook(file);
      const elapsed = performance.now() - started;
      if (problems[0]?.code !== 'UNKNOWN_OPERATION')
        throw new Error(`expected UNKNOWN_OPERATION, got ${problems[0]?.code}`);
      return elapsed;
    });
    return times.sort((a, b) => a - b)[1] ?? 0;
  };
  return { long: time(`devices.${'a'.repeat(650 * 1024)}`), short: time('devices.addDevice') };
}

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-validate-'));
try {
  // Warm-up: the schema compiles on first use, which is not what is measured.
  loadPlaybook(join(import.meta.dirname, '..', 'playbooks', 'nightly-report-export.yaml'));
  const sizes = quick ? [64 * 1024, 256 * 1024] : [256 * 1024, 1024 * 1024];
  const measured = sizes.map((bytes) => {
    const { text, steps } = largePlaybook(bytes);
    const file = join(dir, `large-${bytes}.yaml`);
    writeFileSync(file, text);
    const started = performance.now();
    const { problems } = loadPlaybook(file);
    const elapsed = performance.now() - started;
    if (problems.length > 0) throw new Error(`the generated playbook has problems: ${problems[0]?.message}`);
    return { kib: text.length / 1024, steps, elapsed };
  });
  const [small, large] = measured as [(typeof measured)[0], (typeof measured)[0]];
  const ratio = large.elapsed / large.kib / (small.elapsed / small.kib);
  const figures = measured.map((m) => `${m.kib.toFixed(0)} KiB (${m.steps} steps) ${ms(m.elapsed)}`).join('; ');
  const named = unknownOperationTimes(dir);
  printFigures(
    '14 validation-scaling',
    `${figures}; time per KiB ${ratio.toFixed(2)}× (larger/smaller); unknown operation of 650 KB ${ms(named.long)} against a misspelt one ${ms(named.short)} (${(named.long / named.short).toFixed(1)}×); peak RSS ${peakRssMB().toFixed(0)} MB`,
    [
      { label: `per-KiB ratio ${ratio.toFixed(2)} ≤ 1.5`, pass: ratio <= 1.5 },
      ...(quick ? [] : [{ label: `1 MiB ${ms(large.elapsed)} < 3 s`, pass: large.elapsed < 3000 }]),
      { label: `650 KB operation name ${ms(named.long)} < 1 s`, pass: named.long < 1000 },
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
