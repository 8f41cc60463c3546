import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOutputsFileReference, readOutputs, spillLargeOutputs } from './outputs-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-outputs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('spillLargeOutputs', () => {
  it('writes outputs above the limit to <dir>/<runId>/<path>.json and journals a reference that reads back', async () => {
    const outputs = { items: Array.from({ length: 500 }, (_, index) => ({ id: index, name: `record ${index}` })) };
    const event = await spillLargeOutputs({ type: 'step.finished', path: 'systems[3].list', status: 'succeeded', outputs }, { dir, runId: 'r1', maxInlineBytes: 1024 });
    expect(event).toMatchObject({ type: 'step.finished', outputs: { $outputsFile: join(dir, 'r1', 'systems_3_.list.json') } });
    const reference = (event as { outputs: unknown }).outputs;
    expect(isOutputsFileReference(reference)).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'r1', 'systems_3_.list.json'), 'utf8'))).toEqual(outputs);
    expect(await readOutputs(reference)).toEqual(outputs);
  });

  it('keeps small outputs and other events in the journal as they are', async () => {
    const small = { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { ok: true } } as const;
    expect(await spillLargeOutputs(small, { dir, runId: 'r1', maxInlineBytes: 1024 })).toBe(small);
    expect(await readOutputs({ ok: true })).toEqual({ ok: true });
  });
});
