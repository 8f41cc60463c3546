import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

// A name pasted by mistake can be 650 KB: validate's message and frame showed it whole (650 KB of
// terminal, of `-o json`, of the server's log). They show its start and its size.
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-validate-long-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const huge = 'a'.repeat(650 * 1024);

it('shows an unknown operation of 650 KB by its first 60 characters and its size, in the message and the frame', async () => {
  const file = join(dir, 'call.yaml');
  writeFileSync(file, `name: long\nsteps:\n  - id: s\n    call: devices.${huge}\n`);
  const result = await runCli(['validate', file]);
  expect(result.code).toBe(2);
  expect(result.stdout).toContain(`call.yaml:4:11  error  unknown operation 'devices.${'a'.repeat(52)}… (650 KB)'.`);
  expect(result.stdout).toContain('(UNKNOWN_OPERATION)');
  expect(result.stdout).toContain(`> 4 |     call: devices.${'a'.repeat(82)}…\n    |           ^\n`);
  expect(result.stdout.length).toBeLessThan(2000);
  expect(result.stderr).toBe('');
});

it('shortens every quoted name of a message, whichever rule wrote it: an unknown input and a step id', async () => {
  const file = join(dir, 'names.yaml');
  const input = `x${'b'.repeat(100 * 1024)}`;
  writeFileSync(
    file,
    `name: long\nsteps:\n  - id: s\n    log: "\${{ inputs.${input} }}"\n  - id: t\n    log: "\${{ steps.${huge}.outputs }}"\n`,
  );
  const result = await runCli(['validate', '-o', 'json', file]);
  expect(result.code).toBe(2);
  const problems = JSON.parse(result.stdout) as Array<{ code: string; message: string }>;
  expect(problems.map(({ code }) => code)).toEqual(['UNKNOWN_INPUT', 'UNKNOWN_STEP_REFERENCE']);
  expect(problems[0]?.message).toContain(`no input 'x${'b'.repeat(59)}… (100 KB)'`);
  expect(problems[1]?.message).toContain(`no step with id '${'a'.repeat(60)}… (650 KB)'`);
  for (const { message } of problems) expect(message.length).toBeLessThan(400);
});
