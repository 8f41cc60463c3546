/**
 * The typed-reference check (`UNKNOWN_PATH_FIELD`, `STEP_NOT_YET_RUN`) raises no false alarm on
 * what users copy from: every bundled playbook, every ```yaml block of README.md and docs/*.md
 * that is a whole playbook, and every step kind's example. (docs-examples.test.ts also loads
 * the fragments of the language reference, wrapped into playbooks.)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadPlaybook } from '../../src/playbook/index.js';
import { createStepRegistry } from '../../src/steps/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-typed-references-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shown = (file: string): string[] =>
  loadPlaybook(file).problems.map((problem) => `${problem.line}:${problem.column} ${problem.code}: ${problem.message}`);

const bundled = readdirSync(join(root, 'playbooks'))
  .filter((name) => name.endsWith('.yaml'))
  .sort();

/**
 * Whole playbooks among the fenced YAML blocks of a markdown file: a mapping with `name` and
 * `steps`, none of it elided (`{ ... }`, `[...]` stand for what the reader fills in).
 */
function playbookBlocks(doc: string): Array<[string, string]> {
  const text = readFileSync(join(root, doc), 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((match): Array<[string, string]> => {
    const yaml = match[1] ?? '';
    if (/\{ \.\.\. \}|\[\.\.\.\]/.test(yaml)) return [];
    let data: unknown;
    try {
      data = parse(yaml);
    } catch {
      return [];
    }
    const isPlaybook = typeof data === 'object' && data !== null && 'name' in data && 'steps' in data;
    return isPlaybook ? [[`${doc}:${text.slice(0, match.index).split('\n').length}`, yaml]] : [];
  });
}

const docs = ['README.md', ...readdirSync(join(root, 'docs')).map((name) => `docs/${name}`)]
  .filter((doc) => doc.endsWith('.md'))
  .flatMap(playbookBlocks);

const kindExamples = createStepRegistry()
  .list()
  .flatMap((definition) =>
    definition.examples.map((example, index): [string, string] => [`${definition.kind} #${index}`, example.yaml]),
  );

describe('typed references: no false alarm', () => {
  it('covers the nine bundled playbooks and the docs examples that are playbooks', () => {
    expect(bundled.length).toBeGreaterThanOrEqual(9);
    expect(docs.length).toBeGreaterThanOrEqual(3);
  });

  it.each(bundled)('playbooks/%s', (name) => {
    expect(shown(join(root, 'playbooks', name))).toEqual([]);
  });

  it.each([...docs, ...kindExamples])('%s', (where, yaml) => {
    const file = join(dir, `${where.replace(/[^\w]+/g, '-')}.yaml`);
    writeFileSync(file, yaml);
    expect(shown(file)).toEqual([]);
  });
});

it('the language reference documents the outputs of every step kind', () => {
  const text = readFileSync(join(root, 'docs', 'playbook-language.md'), 'utf8');
  const section = text.slice(text.indexOf('### Outputs of each kind'), text.indexOf('## Expressions'));
  for (const kind of createStepRegistry().kinds) expect(section).toContain(`| \`${kind}\` |`);
});
