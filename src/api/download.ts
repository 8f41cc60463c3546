/**
 * Streaming downloads (consumption-analytics CSV): the response body goes straight to a
 * file or a stream through `pipeline`, a chunk at a time, whatever its size. A file
 * download can also summarise the CSV as it passes (rows, sums of chosen columns), so a
 * caller needing totals does not fetch or read the body a second time.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import type { CallInput } from './build-request.js';
import { ApiError, createTransportError, DownloadInterruptedError } from './errors.js';
import type { CallOptions, Executor } from './executor.js';

const FILE_BUFFER_BYTES = 1 << 20;

export interface DownloadResult {
  bytesWritten: number;
  /**
   * Lines of the body (a last line without a newline counts): for a CSV with a header line, its
   * rows are `lines - 1`.
   */
  lines: number;
  /** The file name of the `Content-Disposition` header, if any. */
  filename?: string;
  /** The file written, when the destination was a path. */
  path?: string;
  contentType?: string;
  /** CSV records after the header line (quoted line breaks kept inside their record), when `sumColumns` was asked. */
  rows?: number;
  /** The sum of each `sumColumns` column over the rows (empty cells count 0), when asked. */
  sums?: Record<string, number>;
  /** Cells of a summed column that were not numbers (left out of its sum), by column; only columns that had some. */
  nonNumeric?: Record<string, number>;
}

/** A file destination that also summarises the CSV it receives. */
export interface DownloadTarget {
  path: string;
  /** Header names of the columns to sum; the answer gets `rows`, `sums` (and `nonNumeric` if any). */
  sumColumns?: readonly string[];
}

export type DownloadDestination = string | DownloadTarget | Writable;

/** The file name a `Content-Disposition` header gives (`filename*=UTF-8''…` preferred), reduced to a base name. */
export function contentDispositionFilename(header: string | undefined): string | undefined {
  if (!header) return undefined;
  let name: string | undefined;
  const extended = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      name = decodeURIComponent(extended[1].trim());
    } catch {
      name = undefined;
    }
  }
  if (name === undefined) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header);
    name = plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2]?.trim();
  }
  // A server-chosen name must not lead outside the destination directory.
  const safe = name === undefined ? undefined : basename(name.replaceAll('\\', '/'));
  return safe && safe !== '.' && safe !== '..' ? safe : undefined;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

const NEWLINE = 0x0a;

/** Counts bytes and lines as chunks pass, keeping nothing but two numbers and the last byte. */
function byteCounter(): { counter: Transform; bytes: () => number; lines: () => number } {
  let bytes = 0;
  let newlines = 0;
  let last: number | undefined;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) newlines += 1;
      if (chunk.length > 0) last = chunk[chunk.length - 1];
      done(null, chunk);
    },
  });
  // A last line without a newline is a line too.
  return { counter, bytes: () => bytes, lines: () => newlines + (last !== undefined && last !== NEWLINE ? 1 : 0) };
}

const QUOTE = '"';

/**
 * Parses a CSV as chunks pass (RFC 4180 quoting: `""` inside quotes, line breaks inside
 * quotes, CRLF or LF), keeping only the header, the cell being read when it belongs to a
 * summed column, and a few numbers: constant memory whatever the size of the body.
 */
function csvSummary(
  operationId: string,
  columns: readonly string[],
): { summary: Transform; result: () => Pick<DownloadResult, 'rows' | 'sums' | 'nonNumeric'> } {
  const decoder = new StringDecoder('utf8');
  const sums: Record<string, number> = Object.fromEntries(columns.map((column) => [column, 0]));
  const nonNumeric: Record<string, number> = {};
  let header: string[] | undefined;
  /** Summed columns by their position, once the header is read. */
  let summed = new Map<number, string>();
  let rows = 0;
  let cells: Array<string | undefined> = [];
  let cell = '';
  let index = 0;
  let inQuotes = false;
  /** Inside quotes, a quote was just read: the next character says whether it was `""` or the closing one. */
  let quoteSeen = false;
  let recordHasText = false;

  const keeping = (): boolean => header === undefined || summed.has(index);
  const endCell = (): void => {
    cells[index] = keeping() ? cell : undefined;
    cell = '';
    index += 1;
  };
  const endRecord = (): void => {
    endCell();
    // A blank line is no record.
    if (recordHasText) {
      if (header === undefined) {
        header = cells.map((name) => (name ?? '').trim());
        const missing = columns.filter((column) => !header?.includes(column));
        if (missing.length > 0) {
          throw new ApiError(
            `${operationId}: the CSV has no column ${missing.map((column) => `'${column}'`).join(', ')} to sum (its columns: ${header.join(', ')}).`,
            'CSV_COLUMN_NOT_FOUND',
            { operationId, retryable: false },
          );
        }
        summed = new Map(columns.map((column) => [header?.indexOf(column) ?? -1, column]));
      } else {
        rows += 1;
        for (const [at, column] of summed) {
          const text = (cells[at] ?? '').trim();
          if (text === '') continue;
          const value = Number(text);
          if (Number.isFinite(value)) sums[column] = (sums[column] ?? 0) + value;
          else nonNumeric[column] = (nonNumeric[column] ?? 0) + 1;
        }
      }
    }
    cells = [];
    index = 0;
    recordHasText = false;
  };
  const read = (text: string): void => {
    for (const char of text) {
      if (quoteSeen) {
        quoteSeen = false;
        if (char === QUOTE) {
          if (keeping()) cell += QUOTE;
          continue;
        }
        inQuotes = false;
      }
      if (inQuotes) {
        if (char === QUOTE) quoteSeen = true;
        else if (keeping()) cell += char;
        continue;
      }
      if (char === QUOTE) {
        inQuotes = true;
        recordHasText = true;
      } else if (char === ',') {
        recordHasText = true;
        endCell();
      } else if (char === '\n') {
        endRecord();
      } else if (char !== '\r') {
        recordHasText = true;
        if (keeping()) cell += char;
      }
    }
  };
  const summary = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        read(decoder.write(chunk));
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      try {
        read(decoder.end());
        // A last record without a line break.
        if (recordHasText || index > 0) endRecord();
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
  return {
    summary,
    result: () => ({
      rows,
      sums: { ...sums },
      ...(Object.keys(nonNumeric).length > 0 ? { nonNumeric: { ...nonNumeric } } : {}),
    }),
  };
}

/**
 * Streams the answer of `operationId` to `destination`: a file path (written under a
 * temporary name and renamed on success; an existing directory receives the
 * `Content-Disposition` file name), a file path with CSV columns to sum, or a writable
 * stream. A break before the end is retried for a file; for a stream it is retried only if
 * nothing reached the stream yet.
 */
export async function download(
  executor: Executor,
  operationId: string,
  input: CallInput,
  target: DownloadDestination,
  options: CallOptions = {},
): Promise<DownloadResult> {
  // A file stream has a `path` too: what writes is a stream.
  const fileTarget =
    typeof target === 'object' && typeof (target as Partial<Writable>).write !== 'function'
      ? (target as DownloadTarget)
      : undefined;
  const destination = fileTarget ? fileTarget.path : (target as string | Writable);
  const sumColumns = fileTarget?.sumColumns;
  const operation = executor.operation(operationId);
  const accept = operation.responses[String(operation.successStatus)]?.contentType ?? '*/*';
  const toDirectory = typeof destination === 'string' && (await isDirectory(destination));
  return executor.exchange(
    operationId,
    input,
    options,
    async (response) => {
      const filename = contentDispositionFilename(response.headers['content-disposition']);
      const contentType = response.headers['content-type'];
      const { counter, bytes, lines } = byteCounter();
      const described = { ...(filename ? { filename } : {}), ...(contentType ? { contentType } : {}) };
      if (typeof destination !== 'string') {
        try {
          await pipeline(response.body, counter, destination, { signal: options.signal });
        } catch (error) {
          if (options.signal?.aborted) throw options.signal.reason;
          if (bytes() > 0) {
            throw new DownloadInterruptedError(
              `${operationId}: the download broke after ${bytes()} bytes had been written to the stream; run it again.`,
              'DOWNLOAD_INTERRUPTED',
              {
                operationId,
                retryable: false,
                cause: error,
              },
            );
          }
          throw error instanceof ApiError ? error : createTransportError(operationId, error, false);
        }
        return { bytesWritten: bytes(), lines: lines(), ...described };
      }
      const path = toDirectory ? join(destination, filename ?? `${operationId}-${randomUUID()}.csv`) : destination;
      const temporary = join(dirname(path), `.${basename(path)}.${randomUUID()}.part`);
      // Made afresh for each attempt, like the counter: a retried download starts over.
      const csv = sumColumns === undefined ? undefined : csvSummary(operationId, sumColumns);
      try {
        // A 1 MiB write buffer: with the default 16 KiB the file side lags the socket and
        // undici's reads pile up in memory on large downloads (measured in bench 6).
        const file = createWriteStream(temporary, { highWaterMark: FILE_BUFFER_BYTES });
        if (csv) await pipeline(response.body, counter, csv.summary, file, { signal: options.signal });
        else await pipeline(response.body, counter, file, { signal: options.signal });
        await rename(temporary, path);
      } catch (error) {
        await unlink(temporary).catch(() => undefined);
        if (options.signal?.aborted) throw options.signal.reason;
        // File-system failures are the caller's to fix, not the network's to retry.
        if (error instanceof Error && 'syscall' in error && typeof (error as NodeJS.ErrnoException).path === 'string')
          throw error;
        throw error instanceof ApiError ? error : createTransportError(operationId, error, false);
      }
      return { bytesWritten: bytes(), lines: lines(), path, ...described, ...(csv ? csv.result() : {}) };
    },
    accept,
  );
}
