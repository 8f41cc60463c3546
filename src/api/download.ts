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

const QUOTE = 0x22;
const COMMA = 0x2c;
const CARRIAGE_RETURN = 0x0d;

/** The text of a cell's bytes: ASCII (numbers, most names) without a decoder. */
function cellText(bytes: number[]): string {
  if (bytes.length === 0) return '';
  return bytes.every((byte) => byte < 0x80) ? String.fromCharCode(...bytes) : Buffer.from(bytes).toString('utf8');
}

/**
 * Parses a CSV as chunks pass (RFC 4180 quoting: `""` inside quotes, line breaks inside
 * quotes, CRLF or LF), keeping only the header, the bytes of the cell being read when it
 * belongs to a summed column, and a few numbers: constant memory whatever the size of the body.
 * It reads bytes, not decoded text: the quote, comma and line breaks are ASCII, which UTF-8
 * never uses inside a multi-byte character, so no chunk is decoded to a string (a 500 MB
 * download decoded chunk by chunk made as much garbage as it had bytes, and raised the peak RSS).
 */
function csvSummary(
  operationId: string,
  columns: readonly string[],
): { summary: Transform; result: () => Pick<DownloadResult, 'rows' | 'sums' | 'nonNumeric'> } {
  const sums: Record<string, number> = Object.fromEntries(columns.map((column) => [column, 0]));
  const nonNumeric: Record<string, number> = {};
  let header: string[] | undefined;
  const headerCells: string[] = [];
  /** Summed columns by their position, once the header is read. */
  let summed = new Map<number, string>();
  let rows = 0;
  /** The bytes of the cell being read, when it is kept (a header cell, or a summed column's). */
  const cell: number[] = [];
  let index = 0;
  let keepCell = true;
  let inQuotes = false;
  /** Inside quotes, a quote was just read: the next byte says whether it was `""` or the closing one. */
  let quoteSeen = false;
  let recordHasText = false;

  const endCell = (): void => {
    if (keepCell) {
      const text = cellText(cell).trim();
      cell.length = 0;
      if (header === undefined) headerCells[index] = text;
      else {
        const column = summed.get(index);
        if (column !== undefined && text !== '') {
          const value = Number(text);
          if (Number.isFinite(value)) sums[column] = (sums[column] ?? 0) + value;
          else nonNumeric[column] = (nonNumeric[column] ?? 0) + 1;
        }
      }
    }
    index += 1;
    keepCell = header === undefined || summed.has(index);
  };
  const endRecord = (): void => {
    endCell();
    // A blank line is no record (its one cell is empty, so it added to no sum).
    if (recordHasText) {
      if (header === undefined) {
        const names = headerCells.map((name) => name ?? '');
        header = names;
        const missing = columns.filter((column) => !names.includes(column));
        if (missing.length > 0) {
          throw new ApiError(
            `${operationId}: the CSV has no column ${missing.map((column) => `'${column}'`).join(', ')} to sum (its columns: ${names.join(', ')}).`,
            'CSV_COLUMN_NOT_FOUND',
            { operationId, retryable: false },
          );
        }
        summed = new Map(columns.map((column) => [names.indexOf(column), column]));
      } else {
        rows += 1;
      }
    } else if (header === undefined) {
      headerCells.length = 0;
    }
    index = 0;
    keepCell = header === undefined || summed.has(0);
    recordHasText = false;
  };
  const read = (bytes: Buffer): void => {
    for (let at = 0; at < bytes.length; at += 1) {
      const byte = bytes[at]!;
      if (quoteSeen) {
        quoteSeen = false;
        if (byte === QUOTE) {
          if (keepCell) cell.push(QUOTE);
          continue;
        }
        inQuotes = false;
      }
      if (inQuotes) {
        if (byte === QUOTE) quoteSeen = true;
        else if (keepCell) cell.push(byte);
        continue;
      }
      if (byte === QUOTE) {
        inQuotes = true;
        recordHasText = true;
      } else if (byte === COMMA) {
        recordHasText = true;
        endCell();
      } else if (byte === NEWLINE) {
        endRecord();
      } else if (byte !== CARRIAGE_RETURN) {
        recordHasText = true;
        if (keepCell) cell.push(byte);
      }
    }
  };
  const summary = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        read(chunk);
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      try {
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
