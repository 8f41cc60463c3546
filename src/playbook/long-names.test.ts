import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadPlaybook } from './load-playbook.js';

// A 650 KB name (pasted by mistake, or planted in a server's playbook folder) took validate
// 17–22 s in did-you-mean and over a minute in the timezone check. No time is asserted here
// (bench/14-validation-scaling.ts measures it): the load completes, located, with no suggestion.
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-long-names-'));
const huge = 'a'.repeat(650 * 1024);

function load(name: string, text: string): ReturnType<typeof loadPlaybook>['problems'] {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return loadPlaybook(file).problems;
}

beforeAll(() => {
  // The schema compiles on the first load (seconds on a loaded machine): not what is tested.
  loadPlaybook(fileURLToPath(new URL('../../playbooks/nightly-report-export.yaml', import.meta.url)));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('locates an unknown operation of 650 KB, without a suggestion', () => {
  const problems = load('call', `name: long\nsteps:\n  - id: s\n    call: devices.${huge}\n`);
  expect(problems.map(({ code, line, column }) => ({ code, line, column }))).toEqual([
    { code: 'UNKNOWN_OPERATION', line: 4, column: 11 },
  ]);
  expect(problems[0]?.message).not.toContain('Did you mean');
});

it('locates a timezone of 650 KB as no timezone', () => {
  const text = `name: long\nschedules:\n  - cron: "0 1 * * *"\n    timezone: "Europe/${huge}"\nsteps:\n  - log: hi\n`;
  expect(load('timezone', text).map(({ code, line }) => ({ code, line }))).toEqual([
    { code: 'INVALID_TIMEZONE', line: 4 },
  ]);
});

it('refuses an expression thousands of operators deep, located, instead of crashing', () => {
  // Deep enough to overflow the stack on every Node this runs on (their default stacks differ).
  const deep = Array.from({ length: 60_000 }, () => '1').join(' + ');
  const problems = load('deep', `name: deep\nsteps:\n  - log: "\${{ ${deep} }}"\n`);
  expect(problems.map(({ code, line, column }) => ({ code, line, column }))).toEqual([
    { code: 'EXPRESSION_PARSE', line: 3, column: 14 },
  ]);
  expect(problems[0]?.message).toMatch(/nests too deeply|stack|too deep/i);
});
