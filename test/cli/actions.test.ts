import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../support/cli.js';

const actions = (...args: string[]): Promise<CliOutcome> => runCli(['actions', ...args]);

describe('fleetbook actions', () => {
  it('lists the step kinds and every operation by area', async () => {
    const { code, stdout } = await actions();
    expect(code).toBe(0);
    expect(stdout).toMatch(/^step kinds\n {2}call {6}Calls a platform operation/);
    expect(stdout).toMatch(/\n {2}forEach {3}Runs its steps once per item/);
    expect(stdout).toMatch(/\n {2}privateCloud\.runSoftwarePrechecks +POST +.*\(write, async\)/);
  });

  it("shows a step kind's fields and examples, and an operation's input schema", async () => {
    const kind = JSON.parse((await actions('forEach')).stdout) as { kind: string; fields: Record<string, unknown>; examples: unknown[] };
    expect(kind.kind).toBe('forEach');
    expect(Object.keys(kind.fields)).toEqual(expect.arrayContaining(['forEach', 'as', 'concurrency', 'tolerate']));
    expect(kind.examples.length).toBeGreaterThan(0);
    const op = JSON.parse((await actions('privateCloud.runSoftwarePrechecks')).stdout) as { input: { required: string[]; properties: Record<string, unknown> } };
    expect(op.input.required).toEqual(expect.arrayContaining(['id', 'body']));
  });

  it('names the closest kind or operation for a typo, exit 2', async () => {
    const { code, stderr } = await actions('forEch');
    expect(code).toBe(2);
    expect(stderr).toContain("unknown step kind or operation 'forEch'. Did you mean 'forEach'?");
  });

  it('ends quietly when its reader stops early (| head), with no stack trace', async () => {
    // Needs the build that `npm test` makes first.
    const child = spawn(process.execPath, ['bin/fleetbook.js', 'actions'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    // The reader is gone before the first line is written.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
