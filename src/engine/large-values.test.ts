import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isOutputsFileReference,
  mayCarryLargeValue,
  readSpilledInputs,
  readSpilledValue,
  spillLargeEventValues,
  spillLargeInputs,
} from './large-values.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-outputs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const records = (count: number) => ({
  items: Array.from({ length: count }, (_, index) => ({ id: index, name: `record ${index}` })),
});

describe('large values in files', () => {
  it('writes outputs above the limit to <dir>/<runId>/<path>.json and journals a reference that reads back', async () => {
    const outputs = records(500);
    const event = await spillLargeEventValues(
      { type: 'step.finished', path: 'systems[3].list', status: 'succeeded', outputs },
      { dir, runId: 'r1', maxInlineBytes: 1024 },
    );
    expect(event).toMatchObject({
      type: 'step.finished',
      outputs: { $outputsFile: join(dir, 'r1', 'systems_3_.list.json') },
    });
    const reference = (event as { outputs: unknown }).outputs;
    expect(isOutputsFileReference(reference)).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'r1', 'systems_3_.list.json'), 'utf8'))).toEqual(outputs);
    expect(await readSpilledValue(reference)).toEqual(outputs);
  });

  it("writes a step's large rendered input to <path>.input.json", async () => {
    const input = records(500);
    const event = await spillLargeEventValues(
      { type: 'step.started', path: 'devices', stepId: 'devices', kind: 'set', input },
      { dir, runId: 'r1', maxInlineBytes: 1024 },
    );
    expect(event).toMatchObject({
      type: 'step.started',
      input: { $outputsFile: join(dir, 'r1', 'devices.input.json') },
    });
    expect(await readSpilledValue((event as { input: unknown }).input)).toEqual(input);
  });

  it("writes a quiet step's one entry's large input and outputs to files of their own", async () => {
    const input = records(400);
    const outputs = records(500);
    const event = await spillLargeEventValues(
      { type: 'step.finished', path: 'pick', stepId: 'pick', kind: 'custom', status: 'succeeded', input, outputs },
      { dir, runId: 'r1', maxInlineBytes: 1024 },
    );
    expect(event).toMatchObject({
      input: { $outputsFile: join(dir, 'r1', 'pick.input.json') },
      outputs: { $outputsFile: join(dir, 'r1', 'pick.json') },
    });
    expect(await readSpilledValue((event as { input: unknown }).input)).toEqual(input);
  });

  it('keeps a run input per value: small ones inline, large ones in run.inputs.<name>.json', async () => {
    const inputs = { region: 'eu-central', devices: records(500) };
    const stored = await spillLargeInputs(inputs, { dir, runId: 'r1', maxInlineBytes: 1024 });
    expect(stored).toEqual({
      region: 'eu-central',
      devices: { $outputsFile: join(dir, 'r1', 'run.inputs.devices.json'), bytes: expect.any(Number) },
    });
    expect(await readSpilledInputs(stored)).toEqual(inputs);
  });

  it('keeps small values and other events as they are', async () => {
    const small = { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { ok: true } } as const;
    expect(await spillLargeEventValues(small, { dir, runId: 'r1', maxInlineBytes: 1024 })).toBe(small);
    const other = { type: 'item.started', path: 'a', index: 0 } as const;
    expect(await spillLargeEventValues(other, { dir, runId: 'r1', maxInlineBytes: 1 })).toBe(other);
    expect(await readSpilledValue({ ok: true })).toEqual({ ok: true });
  });
});

describe('telling an event that may need a file without encoding it', () => {
  const finished = (outputs: unknown) => ({
    type: 'step.finished' as const,
    path: 'p',
    status: 'succeeded' as const,
    outputs,
  });
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  it('never says a value fits when its JSON is over the limit: escapes, multi-byte characters, dates, nesting', () => {
    const limit = 1024;
    const strings = ['plain', '\u0001\u0002"\\', '€uro', '😀', '\n\t'];
    for (let length = 1; length <= 600; length += 7) {
      for (const unit of strings) {
        const text = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
        for (const outputs of [
          { text },
          [text, 1.2345678901234567e-300, null, true],
          { nested: [{ at: new Date(0), text }] },
        ]) {
          const event = finished(outputs);
          if (!mayCarryLargeValue(event, limit)) expect(bytes(event)).toBeLessThanOrEqual(limit);
        }
      }
    }
  });

  it('lets a small event through, and sends a large one to the precise look', () => {
    expect(mayCarryLargeValue(finished({ value: 42 }), 64 * 1024)).toBe(false);
    expect(mayCarryLargeValue(finished({ text: 'x'.repeat(20_000) }), 64 * 1024)).toBe(true);
    // No input or outputs: nothing to put in a file, however long.
    expect(mayCarryLargeValue({ type: 'item.finished', path: 'loop', index: 1, status: 'succeeded' }, 10)).toBe(false);
  });
});
