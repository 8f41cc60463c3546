import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeJsonStreamed } from './json-stream.js';

/** A stream that takes one small piece at a time, asynchronously, and keeps what it got. */
function slowSink(): { sink: Writable; text: () => string; writes: () => number } {
  const chunks: string[] = [];
  const sink = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      setImmediate(done);
    },
  });
  return { sink, text: () => chunks.join(''), writes: () => chunks.length };
}

describe('writeJsonStreamed', () => {
  it("writes exactly JSON.stringify's text, members it cannot write left out as it leaves them", async () => {
    const value = {
      run: { id: 'r1', inputs: { systemIds: ['a', 'b'] }, skipped: undefined, ended: null },
      steps: [
        { path: 'a', children: [], outputs: { body: { list: [1, 'two', { three: [3] }] } }, durationMs: 5 },
        { path: 'b', label: 'ü "quoted" \n', children: [{ path: 'b[0]', children: [undefined, () => 1] }] },
      ],
      log: [],
      empty: {},
      fn: () => 1,
      nested: [[[]], [undefined]],
    };
    const { sink, text } = slowSink();
    await writeJsonStreamed(sink, value);
    expect(text()).toBe(`${JSON.stringify(value)}\n`);
  });

  it('hands a large value to the stream in many pieces, waiting for it to drain', async () => {
    const value = {
      steps: Array.from({ length: 3000 }, (_, index) => ({
        path: `systems[${index}]`,
        children: [{ path: `systems[${index}].before`, outputs: { body: { name: `system ${index}`.repeat(20) } } }],
      })),
    };
    const { sink, text, writes } = slowSink();
    await writeJsonStreamed(sink, value);
    expect(text()).toBe(`${JSON.stringify(value)}\n`);
    // About 1.4 MB in pieces of 64 KiB, not one string.
    expect(writes()).toBeGreaterThan(10);
  });

  it('writes the objects it is told to read as read, a batch at a time while the text is written', async () => {
    // 3,000 steps without values, each read back with its outputs (about 1.2 MB of text).
    const steps = Array.from({ length: 3000 }, (_, index) => ({ path: `s[${index}]`, seq: index, children: [] }));
    const filled = (step: (typeof steps)[number]) => ({
      path: step.path,
      outputs: { body: `value ${step.seq} `.repeat(20), skipped: undefined },
      children: step.children,
    });
    const { sink, text } = slowSink();
    const reads: Array<{ first: number; size: number; writtenBefore: number }> = [];
    await writeJsonStreamed(sink, { steps, log: [] }, '\n', {
      objects: steps,
      batchSize: 500,
      async read(batch) {
        reads.push({ first: batch[0]?.seq ?? -1, size: batch.length, writtenBefore: text().length });
        return batch.map(filled);
      },
    });
    expect(text()).toBe(`${JSON.stringify({ steps: steps.map(filled), log: [] })}\n`);
    expect(reads.map((read) => [read.first, read.size])).toEqual(
      [0, 500, 1000, 1500, 2000, 2500].map((first) => [first, 500]),
    );
    // Each batch is asked for as the one before it is written (one ahead), not all before the text.
    const written = reads.map((read) => read.writtenBefore);
    expect(written.slice(2).every((length, index) => length > (written[index + 1] ?? 0))).toBe(true);
    expect(written.at(-1)).toBeGreaterThan(text().length / 2);
  });

  it('refuses objects to read it never met, rather than writing them without their values', async () => {
    const hidden = { path: 'a' };
    const { sink } = slowSink();
    await expect(
      writeJsonStreamed(sink, { steps: [], other: { hidden } }, '\n', {
        objects: [hidden],
        batchSize: 10,
        read: async (batch) => batch.map(() => ({ path: 'a', outputs: 1 })),
      }),
    ).rejects.toThrow(/not where the writer walks/);
  });
});
