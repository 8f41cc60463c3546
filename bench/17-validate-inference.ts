/**
 * Benchmark 17, type inference at validate (issue 38):
 * - mutation score: every field read of every expression of the bundled playbooks (each `name`
 *   of their syntax trees but the step id after `steps` and the context's own names) misspelt
 *   one at a time (its last two letters swapped, or its last letter doubled), the playbook
 *   validated again: caught when validate reports an error. Target ≥ 95 %.
 * - false alarms: UNKNOWN_PATH_FIELD on the bundled playbooks, the docs' whole playbooks and the
 *   step kinds' examples. Target 0.
 * - validate time on the bundled playbooks against the loader before inference (the parent of
 *   the commit that added `src/playbook/infer/`, its `src/` extracted to a temporary folder),
 *   the two alternated round by round in this process. Target ≤ 1.2×.
 * Run alone: npx tsx bench/17-validate-inference.ts [--quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isScalar, parse, parseDocument } from 'yaml';
import type { Template, TemplateShape } from '../src/expressions/index.js';
import { loadPlaybook } from '../src/playbook/index.js';
import { createStepRegistry } from '../src/steps/index.js';
import { ms, printFigures, quick, rootDir } from './lib/harness.js';

type Load = typeof loadPlaybook;
interface AstNode {
  type: string;
  value?: unknown;
  position?: number;
  [key: string]: unknown;
}

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-infer-'));
const bundled = readdirSync(join(rootDir, 'playbooks'))
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => join(rootDir, 'playbooks', name));
const errorsOf = (load: Load, file: string) => load(file).problems.filter((p) => p.severity === 'error');

/** Every template of a loaded playbook (templates are the objects with `shape`). */
function templatesOf(value: unknown, into: Template[] = [], seen = new Set<object>()): Template[] {
  if (typeof value !== 'object' || value === null || seen.has(value)) return into;
  seen.add(value);
  if (typeof (value as Template).shape === 'function') into.push(value as Template);
  else for (const inner of Object.values(value)) templatesOf(inner, into, seen);
  return into;
}

function expressionsOf(shape: TemplateShape): Array<{ pointer: string; offset: number; text: string; ast: AstNode }> {
  if (shape.kind === 'whole')
    return [{ pointer: shape.pointer, ...shape.expression, ast: shape.expression.ast as never }];
  if (shape.kind === 'interpolation')
    return shape.expressions.map((e) => ({ pointer: shape.pointer, ...e, ast: e.ast as never }));
  if (shape.kind === 'array') return shape.items.flatMap(expressionsOf);
  if (shape.kind === 'object') return shape.entries.flatMap(([, item]) => expressionsOf(item));
  return [];
}

const CONTEXT_NAMES = new Set(['steps', 'inputs', 'run', 'env', 'loop']);

/** The field names an expression reads: name nodes, less the context's names and the step id after `steps`. */
function fieldNames(ast: AstNode, loopVariables: ReadonlySet<string>): AstNode[] {
  const found: AstNode[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    const node = value as AstNode;
    if (node.type === 'path' && Array.isArray(node.steps)) {
      const steps = node.steps as AstNode[];
      const at = steps[0]?.type === 'variable' && steps[0].value === '$' ? 1 : 0;
      const head = steps[at];
      const skip = new Set<AstNode>();
      if (head?.type === 'name' && (CONTEXT_NAMES.has(String(head.value)) || loopVariables.has(String(head.value)))) {
        skip.add(head);
        if (head.value === 'steps' && steps[at + 1] !== undefined) skip.add(steps[at + 1] as AstNode);
      }
      for (const step of steps) if (step.type === 'name' && !skip.has(step)) found.push(step);
    }
    for (const [key, child] of Object.entries(node)) if (!(key === 'steps' && node.type === 'path')) visit(child);
    if (node.type === 'path')
      for (const step of node.steps as AstNode[]) for (const child of Object.values(step)) visit(child);
  };
  visit(ast);
  return found;
}

const misspelt = (name: string): string =>
  name.length > 1 && name.at(-1) !== name.at(-2)
    ? `${name.slice(0, -2)}${name.at(-1)}${name.at(-2)}`
    : `${name}${name.at(-1)}`;

/** Every mutant of one playbook file: the file's YAML with one field read misspelt. */
function* mutants(file: string): Generator<{ text: string; where: string }> {
  const { playbook } = loadPlaybook(file);
  if (playbook === undefined) return;
  const loopVariables = new Set(
    JSON.stringify(parse(readFileSync(file, 'utf8')))
      .match(/"as":"[^"]+"/g)
      ?.map((m) => m.slice(6, -1)) ?? [],
  );
  const source = readFileSync(file, 'utf8');
  const seen = new Set<string>();
  for (const template of templatesOf(playbook)) {
    for (const expression of expressionsOf(template.shape())) {
      for (const node of fieldNames(expression.ast, loopVariables)) {
        const name = String(node.value);
        const end =
          (node.position ?? 0) - (['`', '"', "'"].includes(expression.text[(node.position ?? 0) - 1] ?? '') ? 1 : 0);
        const at = expression.offset + end - name.length;
        const key = `${expression.pointer}@${at}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const document = parseDocument(source);
        const path = expression.pointer
          .split('/')
          .slice(1)
          .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
        const scalar = document.getIn(
          path.map((t) => (/^\d+$/.test(t) ? Number(t) : t)),
          true,
        );
        if (!isScalar(scalar) || typeof scalar.value !== 'string' || scalar.value.slice(at, at + name.length) !== name)
          continue;
        scalar.value = `${scalar.value.slice(0, at)}${misspelt(name)}${scalar.value.slice(at + name.length)}`;
        yield { text: document.toString(), where: `${expression.pointer} ${name}` };
      }
    }
  }
}

function mutationScore(): { total: number; caught: number; missed: string[]; codes: Map<string, number> } {
  let total = 0;
  let caught = 0;
  const missed: string[] = [];
  const codes = new Map<string, number>();
  for (const file of bundled) {
    // The control: the file written back unchanged validates (the mutants are written the same way).
    const control = join(dir, 'control.yaml');
    writeFileSync(control, parseDocument(readFileSync(file, 'utf8')).toString());
    if (errorsOf(loadPlaybook, control).length > 0) throw new Error(`${file} written back does not validate`);
    let index = 0;
    for (const mutant of mutants(file)) {
      index += 1;
      if (quick && index % 5 !== 0) continue;
      const path = join(dir, `mutant.yaml`);
      writeFileSync(path, mutant.text);
      total += 1;
      const [first] = errorsOf(loadPlaybook, path);
      if (first === undefined) missed.push(`${file.split('/').at(-1)} ${mutant.where}`);
      else {
        caught += 1;
        codes.set(first.code, (codes.get(first.code) ?? 0) + 1);
      }
    }
  }
  return { total, caught, missed, codes };
}

/** UNKNOWN_PATH_FIELD on what users copy from: the bundled playbooks, the docs' whole playbooks, the kinds' examples. */
function falseAlarms(): { checked: number; alarms: string[] } {
  const docs = ['README.md', ...readdirSync(join(rootDir, 'docs')).map((name) => `docs/${name}`)].filter((d) =>
    d.endsWith('.md'),
  );
  const texts = [
    ...docs.flatMap((doc) =>
      [...readFileSync(join(rootDir, doc), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)]
        .map((match) => match[1] ?? '')
        .filter((yaml) => /^name:/m.test(yaml) && /^steps:/m.test(yaml) && !/\{ \.\.\. \}|\[\.\.\.\]/.test(yaml)),
    ),
    ...createStepRegistry()
      .list()
      .flatMap((definition) => definition.examples.map((example) => example.yaml)),
  ];
  const files = [
    ...bundled,
    ...texts.map((text, index) => {
      const path = join(dir, `doc-${index}.yaml`);
      writeFileSync(path, text);
      return path;
    }),
  ];
  const alarms = files.flatMap((file) =>
    loadPlaybook(file)
      .problems.filter((p) => p.code === 'UNKNOWN_PATH_FIELD')
      .map((p) => `${file}:${p.line}:${p.column} ${p.message}`),
  );
  return { checked: files.length, alarms };
}

/** The loader before inference: the `src/` of the commit before `src/playbook/infer/` was added, in a folder of its own. */
async function baselineLoader(): Promise<{ load: Load; commit: string }> {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: rootDir, encoding: 'utf8' }).trim();
  const added = git('log', '--diff-filter=A', '--format=%H', '--', 'src/playbook/infer/inferrer.ts').split('\n').at(-1);
  const commit = git('rev-parse', '--short', `${added}^`);
  const base = join(dir, 'baseline');
  execFileSync(
    'sh',
    ['-c', `mkdir -p '${base}' && git archive ${commit} src schemas playbooks | tar -x -C '${base}'`],
    {
      cwd: rootDir,
    },
  );
  writeFileSync(join(base, 'package.json'), '{ "type": "module" }\n');
  symlinkSync(join(rootDir, 'node_modules'), join(base, 'node_modules'));
  const module = (await import(pathToFileURL(join(base, 'src', 'playbook', 'index.ts')).href)) as {
    loadPlaybook: Load;
  };
  return { load: module.loadPlaybook, commit };
}

/** Median time to load every bundled playbook, the two loaders alternated round by round. */
function timeBoth(before: Load, after: Load): { before: number; after: number } {
  const rounds = quick ? 9 : 31;
  const times = { before: [] as number[], after: [] as number[] };
  const once = (load: Load): number => {
    const started = performance.now();
    for (const file of bundled) load(file);
    return performance.now() - started;
  };
  once(before);
  once(after);
  for (let round = 0; round < rounds; round += 1) {
    times.before.push(once(before));
    times.after.push(once(after));
  }
  const median = (list: number[]): number => list.sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
  return { before: median(times.before), after: median(times.after) };
}

try {
  const { load: before, commit } = await baselineLoader();
  const time = timeBoth(before, loadPlaybook);
  const ratio = time.after / time.before;
  const { checked, alarms } = falseAlarms();
  const { total, caught, missed, codes } = mutationScore();
  const byCode = [...codes].map(([code, count]) => `${code} ${count}`).join(', ');
  const score = caught / Math.max(total, 1);
  for (const line of missed) console.log(`  not caught: ${line}`);
  for (const line of alarms) console.log(`  false alarm: ${line}`);
  printFigures(
    '17 validate-inference',
    `${bundled.length} bundled playbooks: ${total} misspelt field reads, ${caught} caught (${(score * 100).toFixed(1)} %: ${byCode}); false alarms ${alarms.length} over ${checked} playbooks (bundled, docs, kind examples); validate of the bundled playbooks ${ms(time.after)} against ${ms(time.before)} before inference (${commit}), ratio ${ratio.toFixed(2)}×`,
    [
      { label: `mutation score ${(score * 100).toFixed(1)} % ≥ 95 %`, pass: score >= 0.95 },
      { label: `false alarms ${alarms.length} = 0`, pass: alarms.length === 0 },
      { label: `time ratio ${ratio.toFixed(2)} ≤ 1.2`, pass: ratio <= 1.2 },
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
