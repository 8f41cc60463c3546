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
    const kind = JSON.parse((await actions('forEach')).stdout) as {
      kind: string;
      fields: Record<string, unknown>;
      examples: unknown[];
    };
    expect(kind.kind).toBe('forEach');
    expect(Object.keys(kind.fields)).toEqual(expect.arrayContaining(['forEach', 'as', 'concurrency', 'tolerate']));
    expect(kind.examples.length).toBeGreaterThan(0);
    const op = JSON.parse((await actions('privateCloud.runSoftwarePrechecks')).stdout) as {
      input: { required: string[]; properties: Record<string, unknown> };
    };
    expect(op.input.required).toEqual(expect.arrayContaining(['id', 'body']));
  });

  it('prints an operation as readable text on a terminal and with -o text: its input and the shape of its answer', async () => {
    const onTty = await runCli(['actions', 'privateCloud.getSystem'], { tty: true });
    const asked = await actions('privateCloud.getSystem', '-o', 'text');
    expect(onTty.code).toBe(0);
    expect(asked.stdout).toBe(onTty.stdout);
    expect(onTty.stdout).toMatch(
      /^privateCloud\.getSystem {2}GET \/private-cloud-business\/v1beta1\/systems\/\{id\}\n {2}Get a system\n {2}read; rate limit group privateCloud/,
    );
    expect(onTty.stdout).toMatch(
      /\nwith: \(what the call step takes\)\n {2}id {6}string {2}required {2}Id of the record\.\n/,
    );
    // The answer as the YAML a step reads: `field: type`, enums, required marks, lists as `- ` items.
    expect(onTty.stdout).toMatch(
      /\noutputs: \(steps\.<id>\.outputs; the answer is HTTP 200 application\/json\)\n {2}status: integer\n {2}headers:\n {4}<name>: string\n {2}body:\n {4}# one of: /,
    );
    expect(onTty.stdout).toContain('\n    id: string  # required\n');
    expect(onTty.stdout).toMatch(
      /\n {4}softwareInfo:\n {6}currentUpdateStatus:\n(?: {8}.*\n)*? {8}state: UP_TO_DATE \| /,
    );
    expect(onTty.stdout).toMatch(/\n {6}hypervisorClusters:\n {8}- \w+: /);
    expect(onTty.stdout).not.toContain('{\n');
    // JSON carries the answer's shape too, and YAML is one switch away.
    const json = JSON.parse((await actions('privateCloud.getSystem', '--json')).stdout) as {
      response: { status: number; schema: unknown };
      outputs: unknown;
    };
    expect(json.response.status).toBe(200);
    expect(json).toMatchObject({
      outputs: { properties: { status: { type: 'integer' }, body: { anyOf: expect.any(Array) } } },
    });
    expect(json.response.schema).toBeTypeOf('object');
    expect((await actions('privateCloud.getSystem', '-o', 'yaml')).stdout).toMatch(
      /^---\nid: privateCloud\.getSystem\nmethod: GET\n/,
    );
  });

  it('shows the record of an async operation a call step follows with `wait`, as text and as JSON', async () => {
    const text = (await actions('privateCloud.runSoftwarePrechecks', '-o', 'text')).stdout;
    expect(text).toMatch(
      /\noutputs: \(steps\.<id>\.outputs; the answer is HTTP 202 application\/json; `operation` with `wait`\)\n/,
    );
    expect(text).toMatch(/\n {2}operation:\n(?: {4}.*\n)*? {4}state: INITIALIZED \| RUNNING \| .*# required\n/);
    const json = JSON.parse((await actions('privateCloud.runSoftwarePrechecks', '--json')).stdout) as {
      outputs: { properties: { operation: unknown } };
    };
    // The record's schema as the description has it (an `allOf` of the platform record and its own fields).
    const record = JSON.stringify(json.outputs.properties.operation);
    for (const field of ['"state"', '"progressPercent"', '"logMessages"']) expect(record).toContain(field);
  });

  it("shows a step kind's outputs: a loop's items with their steps", async () => {
    const { stdout } = await runCli(['actions', 'forEach'], { tty: true });
    expect(stdout).toMatch(/\noutputs: \(steps\.<id>\.outputs\)\n {2}items: +# One entry per item/);
    expect(stdout).toMatch(
      /\n {4}- index: integer +# .*\n {6}item: any +# The item\.\n {6}status: .*\n {6}steps: object +# /,
    );
    expect(stdout).toMatch(/\n {2}notStarted: integer/);
    const json = JSON.parse((await actions('sleep', '-o', 'json')).stdout) as { outputs: unknown };
    expect(json.outputs).toMatchObject({ properties: { sleptMs: { type: 'integer' } }, additionalProperties: false });
  });

  it("prints a step kind's fields and its examples as the YAML they are, on a terminal", async () => {
    const { code, stdout } = await runCli(['actions', 'log'], { tty: true });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^log\nWrites a message to the run log\.\n\nfields:\n {2}log {4}any {2}required {2}The message/,
    );
    expect(stdout).toContain(
      '\nexamples:\n# Log a message with a value.\nname: log-example\nsteps:\n  - log: "run ${{ run.id }} starting"\n',
    );
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
