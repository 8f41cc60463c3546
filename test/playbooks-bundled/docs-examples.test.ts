/**
 * The YAML examples of docs/playbook-language.md and docs/playbooks.md must stay valid as the
 * language changes: each ```yaml block that is a playbook is loaded as it is; a step list,
 * or a `defaults:` / `schedules:` fragment, is wrapped into the smallest playbook that gives
 * it what it names (the inputs it reads, a `system` loop variable, the earlier steps it
 * refers to) and loaded. Blocks that are no playbook (an inputs file, a list elided with
 * `[...]`) are named here, so a new example cannot slip through unchecked.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../src/playbook/index.js';

const DOCS = ['docs/playbook-language.md', 'docs/playbooks.md'] as const;
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-docs-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The playbook the `uses:` example calls (`uses: ./precheck.yaml` with `systemId`).
writeFileSync(
  join(dir, 'precheck.yaml'),
  `name: precheck
inputs:
  systemId: { type: string, description: the system }
steps:
  - id: precheck
    call: privateCloud.runSoftwarePrechecks
    with: { id: "\${{ inputs.systemId }}", body: { catalogVersion: "2.4.0" } }
    wait: true
`,
);

interface Example {
  doc: string;
  line: number;
  yaml: string;
}

function examples(): Example[] {
  return DOCS.flatMap((doc) => {
    const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8');
    return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => ({
      doc,
      line: text.slice(0, match.index).split('\n').length,
      yaml: match[1] ?? '',
    }));
  });
}

const indent = (text: string, by: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : by + line))
    .join('\n');

/** Inputs the example reads (or its schedule gives), declared so it may read them. */
function inputsOf(yaml: string): string {
  const names = [...new Set([...yaml.matchAll(/inputs\.([A-Za-z_]\w*)/g)].map((match) => match[1] ?? ''))];
  const fromSchedule = [...yaml.matchAll(/inputs: \{ (\w+):/g)].map((match) => match[1] ?? '');
  const all = [...new Set([...names, ...fromSchedule])];
  if (all.length === 0) return '';
  // The examples' flags are `frozen` and `force`; their plural names (`systemIds`) are lists.
  const type = (name: string): string =>
    /^(frozen|force)$/.test(name) ? 'boolean' : name.endsWith('s') ? 'array' : 'string';
  return `inputs:\n${all.map((name) => `  ${name}: { type: ${type(name)}, description: read by the example }`).join('\n')}\n`;
}

/** Earlier steps the example refers to but does not define: stubs that come first. */
function stubsOf(yaml: string): string {
  const defined = new Set([...yaml.matchAll(/id: ([A-Za-z_]\w*)/g)].map((match) => match[1]));
  const referenced = [...new Set([...yaml.matchAll(/steps\.([A-Za-z_]\w*)/g)].map((match) => match[1] ?? ''))].filter(
    (id) => !defined.has(id),
  );
  return referenced.map((id) => `  - { id: ${id}, set: { count: 1 } }\n`).join('');
}

/** The example as a playbook file's text, or why it is not one. */
function asPlaybook(example: Example): { text: string } | { skip: string } {
  const { yaml } = example;
  if (/^# \S+\.yaml\n(?!name:)/.test(yaml) && !/^steps:/m.test(yaml)) return { skip: 'an inputs file' };
  if (/^name:/m.test(yaml) && /^steps:/m.test(yaml)) return { text: yaml };
  if (/\[\s*\.\.\.\s*\]/.test(yaml)) return { skip: 'elided with [...]' };
  const name = `name: example-${example.line}\n`;
  if (/^(defaults|schedules):/.test(yaml))
    return { text: `${name}${inputsOf(yaml)}${yaml.trimEnd()}\nsteps:\n  - log: example\n` };
  if (yaml.startsWith('- ')) {
    // A loop variable named `system` is what the examples use inside a rolling update's loop.
    const body = /\bsystem\./.test(yaml)
      ? `  - id: example\n    forEach: '\${{ [{ "id": "system-1" }] }}'\n    as: system\n    steps:\n${indent(yaml, '      ')}\n`
      : `${indent(yaml, '  ')}\n`;
    return { text: `${name}${inputsOf(yaml)}steps:\n${stubsOf(yaml)}${body}` };
  }
  return { skip: 'neither a playbook, a step list nor a top-level fragment' };
}

const all = examples().map((example) => ({ ...example, wrapped: asPlaybook(example) }));

describe('the docs YAML examples', () => {
  it('are found, and the ones that are no playbook are the known few', () => {
    expect(all.length).toBeGreaterThanOrEqual(12);
    const skipped = all.flatMap((example) =>
      'skip' in example.wrapped
        ? [`${example.doc} (${example.wrapped.skip}): ${example.yaml.split('\n')[0] ?? ''}`]
        : [],
    );
    expect(skipped).toEqual([
      'docs/playbook-language.md (elided with [...]): - id: systems',
      'docs/playbook-language.md (elided with [...]): - id: reads',
      'docs/playbooks.md (an inputs file): # devices.yaml',
    ]);
  });

  it.each(
    all
      .filter((example) => 'text' in example.wrapped)
      .map((example) => [`${example.doc}:${example.line}`, example] as const),
  )('%s loads with no problem', (_at, example) => {
    const file = join(dir, `example-${example.line}.yaml`);
    writeFileSync(file, (example.wrapped as { text: string }).text);
    const { problems } = loadPlaybook(file);
    expect(problems.map((problem) => `${problem.line}:${problem.column} ${problem.code}: ${problem.message}`)).toEqual(
      [],
    );
  });
});
