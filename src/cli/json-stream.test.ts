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
});
