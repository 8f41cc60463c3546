/**
 * The `file` step: a list of flat objects written as a CSV file into the run's own outputs
 * folder (`run.outputsDir`), where an `email` step may attach it and the server serves it. The
 * name is a bare file name: the step cannot write anywhere else.
 */
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { tableOf } from '../../expressions/index.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { LeafResult, StepRuntime } from './types.js';

export interface FileArgs {
  name: unknown;
  csv: unknown;
  /** The header, in order; unset: the rows' keys in the order they first appear. */
  columns?: readonly string[];
  /** `file:line` of the step, for located messages. */
  where: string;
}

const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

/** Why `name` is no file name of the run's folder (a folder, `..`, a hidden file), or undefined. */
export function fileNameProblem(name: unknown): string | undefined {
  if (typeof name === 'string' && FILE_NAME.test(name)) return undefined;
  return `${JSON.stringify(name)} is not a file name: letters, digits, '_', '-' and '.', not starting with '.' or '-', no folder`;
}

function invalid(message: string): never {
  throw new StepError(message, { kind: StepFailureKind.invalidInput, code: 'INVALID_FILE' });
}

/**
 * A cell a spreadsheet would read as a formula (`=HYPERLINK(...)`, `+1+2`, `@SUM`) from a value
 * of the platform or a person: written with a leading `'`, so it opens as the text it is. A
 * number (`-5`, `+3.2`) stays a number.
 */
const inert = (text: string): string =>
  /^[=+\-@\t\r]/.test(text) && !/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? `'${text}` : text;

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or edge spaces. */
const field = (cell: string): string => {
  const text = inert(cell);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** The CSV text of `rows` (a list of flat objects; one object is a list of one). */
export function csvText(rows: unknown, columns: readonly string[] | undefined): { text: string; rows: number } {
  const list = rows === undefined || rows === null ? [] : Array.isArray(rows) ? rows : [rows];
  const table = tableOf(list).fleetbookTable;
  const header = columns ?? table.columns;
  const lines = [
    header,
    ...table.rows.map((cells) => header.map((column) => cells[table.columns.indexOf(column)] ?? '')),
  ];
  return {
    text: header.length === 0 ? '' : lines.map((cells) => `${cells.map(field).join(',')}\r\n`).join(''),
    rows: list.length,
  };
}

export async function executeFile(args: FileArgs, runtime: StepRuntime): Promise<LeafResult> {
  const problem = fileNameProblem(args.name);
  if (problem) invalid(`${args.where}: file name: ${problem}`);
  let csv: { text: string; rows: number };
  try {
    csv = csvText(args.csv, args.columns);
  } catch (error) {
    return invalid(`${args.where}: file csv: ${(error as Error).message.replace(/^\$table: /, '')}`);
  }
  const dir = runtime.mail.outputsDir;
  const path = join(dir, args.name as string);
  // Written whole, then renamed: an `email` step or a download never reads half a file.
  const temporary = join(dir, `.${args.name as string}.${randomUUID()}.part`);
  await mkdir(dir, { recursive: true });
  try {
    await writeFile(temporary, csv.text);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return {
    outputs: { path, filename: args.name, bytes: Buffer.byteLength(csv.text), rows: csv.rows, contentType: 'text/csv' },
  };
}
