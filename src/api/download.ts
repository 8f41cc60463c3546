/**
 * Streaming downloads (consumption-analytics CSV): the response body goes straight to a
 * file or a stream through `pipeline`, a chunk at a time, whatever its size. A file
 * download can also summarise the CSV as it passes (rows, sums of chosen columns), so a
 * caller needing totals does not fetch or read the body a second time.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CallInput } from './build-request.js';
import { ApiError, createTransportError, DownloadInterruptedError } from './errors.js';
import type { CallOptions, RequestExecutor } from './request-executor.js';

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

/**
 * How many body bytes pass between two young-generation collections. Each socket read is a
 * buffer outside the heap, freed only when a collection finds its small JS object dead; a
 * download makes little JS garbage, so V8 collects rarely and the read buffers already written
 * piled up to ~38 MB (the peak RSS of a 504 MB download, bench 6). A collection of the young
 * generation costs about 0.1 ms: one per 8 MiB bounds that pile for ~60 per 500 MB.
 */
const COLLECT_EVERY_BYTES = 8 << 20;

let collectYoung: (() => void) | undefined;

/**
 * A young-generation collection. V8's `gc` is exposed to new contexts only when asked
 * (`--expose-gc`); it is taken from one such context, so the process's own global stays as it was.
 */
function collectYoungGeneration(): void {
  if (collectYoung === undefined) {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
    collectYoung = () => gc({ type: 'minor' });
  }
  collectYoung();
}

/** Counts bytes and lines as chunks pass, keeping nothing but two numbers and the last byte; collects the young generation every `COLLECT_EVERY_BYTES`. */
function byteCounter(): { counter: Transform; bytes: () => number; lines: () => number } {
  let bytes = 0;
  let newlines = 0;
  let last: number | undefined;
  let collectAt = COLLECT_EVERY_BYTES;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes >= collectAt) {
        collectAt = bytes + COLLECT_EVERY_BYTES;
        collectYoungGeneration();
      }
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

const SPACE = 0x20;
const TAB = 0x09;
const PLUS = 0x2b;
const MINUS = 0x2d;
const POINT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** Up to 15 digits a mantissa is an exact double (< 2^53), and so is every power of ten up to 10^15. */
const MAX_PLAIN_DIGITS = 15;
const POWERS_OF_TEN = Array.from({ length: MAX_PLAIN_DIGITS + 1 }, (_, power) => 10 ** power);

/** The bytes of the cell being read, in one buffer reused from cell to cell (grown when a cell is longer). */
export class CellBytes {
  bytes = new Uint8Array(256);
  length = 0;

  push(byte: number): void {
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.length] = byte;
    this.length += 1;
  }

  text(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.length).toString('utf8');
  }

  /**
   * The value of a plain decimal cell (spaces, an optional sign, at most 15 digits with one
   * optional point, spaces) without making a string: the mantissa and the power of ten are
   * exact doubles, so their one division rounds as `Number(text)` does. Undefined for anything
   * else (empty, exponents, hexadecimal, longer mantissas, text): the caller reads the text.
   * A 500 MB CSV has millions of cells: strings for each raised the download's peak RSS.
   */
  plainDecimal(): number | undefined {
    const { bytes, length } = this;
    let at = 0;
    while (at < length && (bytes[at] === SPACE || bytes[at] === TAB)) at += 1;
    let negative = false;
    if (at < length && (bytes[at] === PLUS || bytes[at] === MINUS)) {
      negative = bytes[at] === MINUS;
      at += 1;
    }
    let mantissa = 0;
    let digits = 0;
    let fractionDigits = 0;
    let pointSeen = false;
    for (; at < length; at += 1) {
      const byte = bytes[at]!;
      if (byte >= DIGIT_0 && byte <= DIGIT_9) {
        digits += 1;
        if (digits > MAX_PLAIN_DIGITS) return undefined;
        mantissa = mantissa * 10 + (byte - DIGIT_0);
        if (pointSeen) fractionDigits += 1;
      } else if (byte === POINT && !pointSeen) pointSeen = true;
      else break;
    }
    while (at < length && (bytes[at] === SPACE || bytes[at] === TAB)) at += 1;
    if (at < length || digits === 0) return undefined;
    const value = mantissa / POWERS_OF_TEN[fractionDigits]!;
    return negative ? -value : value;
  }
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
  const parser = new CsvSummaryParser(operationId, columns);
  const summary = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        parser.read(chunk);
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      try {
        parser.finish();
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
  return { summary, result: () => parser.result() };
}

/** The state of `csvSummary`'s parse: the byte reader's (quotes, the cell) and the tally's (header, sums). */
class CsvSummaryParser {
  private readonly sums: Record<string, number>;
  private readonly nonNumeric: Record<string, number> = {};
  private header: string[] | undefined;
  private readonly headerCells: string[] = [];
  /** Summed columns by their position, once the header is read. */
  private summed = new Map<number, string>();
  private rows = 0;
  /** The bytes of the cell being read, when it is kept (a header cell, or a summed column's). */
  private readonly cell = new CellBytes();
  private index = 0;
  private keepCell = true;
  private inQuotes = false;
  /** Inside quotes, a quote was just read: the next byte says whether it was `""` or the closing one. */
  private quoteSeen = false;
  private recordHasText = false;

  constructor(
    private readonly operationId: string,
    private readonly columns: readonly string[],
  ) {
    this.sums = Object.fromEntries(columns.map((column) => [column, 0]));
  }

  read(bytes: Buffer): void {
    for (let at = 0; at < bytes.length; at += 1) {
      const byte = bytes[at]!;
      if (this.quoteSeen) {
        this.quoteSeen = false;
        if (byte === QUOTE) {
          if (this.keepCell) this.cell.push(QUOTE);
          continue;
        }
        this.inQuotes = false;
      }
      if (this.inQuotes) {
        if (byte === QUOTE) this.quoteSeen = true;
        else if (this.keepCell) this.cell.push(byte);
        continue;
      }
      if (byte === QUOTE) {
        this.inQuotes = true;
        this.recordHasText = true;
      } else if (byte === COMMA) {
        this.recordHasText = true;
        this.endCell();
      } else if (byte === NEWLINE) {
        this.endRecord();
      } else if (byte !== CARRIAGE_RETURN) {
        this.recordHasText = true;
        if (this.keepCell) this.cell.push(byte);
      }
    }
  }

  /** The end of the body: a last record without a line break still counts. */
  finish(): void {
    if (this.recordHasText || this.index > 0) this.endRecord();
  }

  result(): Pick<DownloadResult, 'rows' | 'sums' | 'nonNumeric'> {
    return {
      rows: this.rows,
      sums: { ...this.sums },
      ...(Object.keys(this.nonNumeric).length > 0 ? { nonNumeric: { ...this.nonNumeric } } : {}),
    };
  }

  /** Adds a summed column's cell: a plain decimal read from its bytes, else its text as `Number` reads it (empty adds nothing). */
  private addCell(column: string): void {
    const plain = this.cell.plainDecimal();
    if (plain !== undefined) {
      this.sums[column] = (this.sums[column] ?? 0) + plain;
      return;
    }
    const text = this.cell.text().trim();
    if (text === '') return;
    const value = Number(text);
    if (Number.isFinite(value)) this.sums[column] = (this.sums[column] ?? 0) + value;
    else this.nonNumeric[column] = (this.nonNumeric[column] ?? 0) + 1;
  }

  private endCell(): void {
    if (this.keepCell) {
      if (this.header === undefined) this.headerCells[this.index] = this.cell.text().trim();
      else {
        const column = this.summed.get(this.index);
        if (column !== undefined) this.addCell(column);
      }
      this.cell.length = 0;
    }
    this.index += 1;
    this.keepCell = this.header === undefined || this.summed.has(this.index);
  }

  private endRecord(): void {
    this.endCell();
    // A blank line is no record (its one cell is empty, so it added to no sum).
    if (this.recordHasText) {
      if (this.header === undefined) this.readHeader();
      else this.rows += 1;
    } else if (this.header === undefined) {
      this.headerCells.length = 0;
    }
    this.index = 0;
    this.keepCell = this.header === undefined || this.summed.has(0);
    this.recordHasText = false;
  }

  /** The first record names the columns: the summed ones must be among them. */
  private readHeader(): void {
    const names = this.headerCells.map((name) => name ?? '');
    this.header = names;
    const missing = this.columns.filter((column) => !names.includes(column));
    if (missing.length > 0) {
      throw new ApiError(
        `${this.operationId}: the CSV has no column ${missing.map((column) => `'${column}'`).join(', ')} to sum (its columns: ${names.join(', ')}).`,
        'CSV_COLUMN_NOT_FOUND',
        { operationId: this.operationId, retryable: false },
      );
    }
    this.summed = new Map(this.columns.map((column) => [names.indexOf(column), column]));
  }
}

/**
 * Streams the answer of `operationId` to `destination`: a file path (written under a
 * temporary name and renamed on success; an existing directory receives the
 * `Content-Disposition` file name), a file path with CSV columns to sum, or a writable
 * stream. A break before the end is retried for a file; for a stream it is retried only if
 * nothing reached the stream yet.
 */
export async function download(
  executor: RequestExecutor,
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
        // The run's own folder (`run.outputsDir`) exists only once something is written to it.
        await mkdir(dirname(path), { recursive: true });
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
