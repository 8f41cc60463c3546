// What `fleetbook validate` says of approval gates: located problems, exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-approval-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function validate(name: string, yaml: string) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  return runCli(['validate', file], { env: {} });
}

it('refuses a gate inside a forEach, pointing at it, and names the loop', async () => {
  const { code, stdout: stderr } = await validate(
    'in-loop',
    `name: in-loop
steps:
  - id: each
    forEach: [1, 2]
    steps:
      - id: gate
        approval: { message: go? }
`,
  );
  expect(code).toBe(2);
  expect(stderr).toContain('in-loop.yaml:7:9');
  expect(stderr).toContain('an approval gate cannot be inside a forEach (at /steps/0)');
  expect(stderr).toContain('(APPROVAL_IN_CONCURRENT_STEP)');
});

it('refuses a bad onTimeout and a form field that is no JSON Schema, located', async () => {
  const { code, stdout: stderr } = await validate(
    'bad-gate',
    `name: bad-gate
steps:
  - id: gate
    approval:
      message: go?
      onTimeout: wait
      inputs:
        size: { type: integer, minimum: many }
`,
  );
  expect(code).toBe(2);
  expect(stderr).toMatch(/bad-gate\.yaml:6:\d+ +error .*onTimeout.*(fail|continue|skip)/);
  expect(stderr).toMatch(/bad-gate\.yaml:8:\d+ +error +approval input 'size' is not a valid JSON Schema/);
});

it('accepts a gate in a block, with a form', async () => {
  const { code } = await validate(
    'good',
    `name: good
steps:
  - id: guarded
    block:
      - id: gate
        approval:
          message: go?
          approvers: [alice]
          timeout: 2h
          onTimeout: skip
          inputs: { size: { type: integer, minimum: 1, default: 2 } }
`,
  );
  expect(code).toBe(0);
});

it('refuses an approval policy that could never pass, or a groups/users map with another key, located', async () => {
  const { code, stdout: stderr } = await validate(
    'bad-policy',
    `name: bad-policy
steps:
  - id: twoOfOne
    approval:
      message: go?
      approvers: [alice]
      required: 2
  - id: wrongKey
    approval:
      message: go?
      approvers: { group: [change-managers] }
      required: 0
      notRequester: yes please
`,
  );
  expect(code).toBe(2);
  expect(stderr).toMatch(
    /bad-policy\.yaml:7:\d+ +error +required: 2 distinct approvals, but approvers names only 1 \(alice\): the gate could never pass.*INVALID_APPROVAL_POLICY/,
  );
  expect(stderr).toMatch(/bad-policy\.yaml:11:\d+ +error .*approvers/);
  expect(stderr).toMatch(/bad-policy\.yaml:12:\d+ +error .*required/);
  expect(stderr).toMatch(/bad-policy\.yaml:13:\d+ +error .*notRequester/);
});

it('accepts groups and users, required and notRequester', async () => {
  const { code, stdout } = await validate(
    'good-policy',
    `name: good-policy
steps:
  - id: gate
    approval:
      message: go?
      approvers: { groups: [change-managers], users: [alice] }
      required: 2
      notRequester: true
`,
  );
  expect(stdout).toBe('1 playbook(s) valid\n');
  expect(code).toBe(0);
});
