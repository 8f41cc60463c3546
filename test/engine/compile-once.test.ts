/**
 * Expressions are parsed once per playbook, when it loads, not once per evaluation: a
 * forEach over many items evaluates the same compiled expressions. The load keeps the syntax tree
 * only; an expression JSONata evaluates gets its JSONata expression at its first evaluation, once.
 * A plain path (`loop.index`) is not given to JSONata at all unless an evaluation needs it (an
 * array on the path), and then once. Every compilation goes through the jsonata factory, which this file wraps to record the
 * texts it compiles.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type jsonata from 'jsonata';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
import { startHarness, type Harness } from './harness.js';

const compiled = vi.hoisted((): string[] => []);
vi.mock('jsonata', async (importOriginal) => {
  const actual = (await importOriginal<{ default: typeof jsonata }>()).default;
  const counting = (text: string, options?: Parameters<typeof jsonata>[1]) => {
    compiled.push(text);
    return actual(text, options);
  };
  return { default: counting };
});

let harness: Harness;
let dir: string;
beforeAll(async () => {
  harness = await startHarness({}, { logLevel: 'info' });
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-compile-'));
});
afterAll(async () => {
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

const ITEMS = 40;

describe('expression compilation', () => {
  it('parses each expression of a playbook once at load, and compiles what JSONata evaluates once, not once per item', async () => {
    const file = join(dir, 'many.yaml');
    writeFileSync(
      file,
      `name: many-items
steps:
  - id: list
    set: { value: [{ name: a }, { name: b }] }
  - id: each
    forEach: \${{ [1..${ITEMS}] }}
    as: n
    concurrency: 4
    steps:
      - id: double
        set: { value: "\${{ n * 2 }}", label: "item \${{ loop.index }}", names: "\${{ steps.list.outputs.value.name }}" }
      - id: check
        assert: \${{ steps.double.outputs.value = n * 2 }}
      - id: names
        assert: \${{ steps.double.outputs.names = ['a', 'b'] }}
`,
    );
    const loaded = loadPlaybook(file);
    expect(loaded.problems).toEqual([]);
    if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error('the playbook does not load');
    const atLoad = [...compiled];
    for (const text of [' n * 2 ', ' steps.double.outputs.value = n * 2 ']) {
      expect(
        atLoad.filter((compiledText) => compiledText === text),
        text,
      ).toHaveLength(1);
    }
    // Plain paths: JSONata's parser is not needed to know what they read.
    expect(atLoad).not.toContain(' loop.index ');
    expect(atLoad).not.toContain(' steps.list.outputs.value.name ');

    const result = await harness.run(loaded.playbook, { env: {} });
    expect(result.status).toBe('succeeded');
    expect(result.steps.filter((step) => step.path.endsWith('.check') && step.status === 'succeeded')).toHaveLength(
      ITEMS,
    );
    expect(result.steps.filter((step) => step.path.endsWith('.names') && step.status === 'succeeded')).toHaveLength(
      ITEMS,
    );
    // What JSONata evaluates (the range, the comparison of lists, the path over an array) gets
    // its JSONata expression at its first evaluation, then keeps it: once each, not once per item.
    // The load keeps only the syntax tree (a JSONata expression held 16 KB: 20,000 of them made
    // validate of a 1 MiB playbook slow); what is evaluated without JSONata (`n * 2`) never has one.
    expect(compiled.slice(atLoad.length).sort()).toEqual([
      ' [1..40] ',
      " steps.double.outputs.names = ['a', 'b'] ",
      ' steps.list.outputs.value.name ',
    ]);
  });
});
