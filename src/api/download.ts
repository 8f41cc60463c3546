/**
 * Streaming downloads (consumption-analytics CSV): the response body goes straight to a
 * file or a stream through `pipeline`, a chunk at a time, whatever its size.
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
}

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

/**
 * Streams the answer of `operationId` to `destination`: a file path (written under a
 * temporary name and renamed on success; an existing directory receives the
 * `Content-Disposition` file name) or a writable stream. A break before the end is retried
 * for a file; for a stream it is retried only if nothing reached the stream yet.
 */
export async function download(
  executor: Executor,
  operationId: string,
  input: CallInput,
  destination: string | Writable,
  options: CallOptions = {},
): Promise<DownloadResult> {
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
            throw new DownloadInterruptedError(`${operationId}: the download broke after ${bytes()} bytes had been written to the stream; run it again.`, 'DOWNLOAD_INTERRUPTED', {
              operationId,
              retryable: false,
              cause: error,
            });
          }
          throw error instanceof ApiError ? error : createTransportError(operationId, error, false);
        }
        return { bytesWritten: bytes(), lines: lines(), ...described };
      }
      const path = toDirectory ? join(destination, filename ?? `${operationId}-${randomUUID()}.csv`) : destination;
      const temporary = join(dirname(path), `.${basename(path)}.${randomUUID()}.part`);
      try {
        // A 1 MiB write buffer: with the default 16 KiB the file side lags the socket and
        // undici's reads pile up in memory on large downloads (measured in bench 6).
        await pipeline(response.body, counter, createWriteStream(temporary, { highWaterMark: FILE_BUFFER_BYTES }), { signal: options.signal });
        await rename(temporary, path);
      } catch (error) {
        await unlink(temporary).catch(() => undefined);
        if (options.signal?.aborted) throw options.signal.reason;
        // File-system failures are the caller's to fix, not the network's to retry.
        if (error instanceof Error && 'syscall' in error && typeof (error as NodeJS.ErrnoException).path === 'string') throw error;
        throw error instanceof ApiError ? error : createTransportError(operationId, error, false);
      }
      return { bytesWritten: bytes(), lines: lines(), path, ...described };
    },
    accept,
  );
}
