/**
 * Large step outputs (a `paginate: all` over thousands of records) live in files under
 * `FLEETBOOK_HOME/outputs/<runId>/`, the journal keeping a reference, so a step never fails on
 * the store's payload limit and the journal stays small. Resume reads them back.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JournalEvent } from '../store/types.js';

/** What the journal keeps in place of outputs written to a file. */
export interface OutputsFileReference {
  $outputsFile: string;
  bytes: number;
}

/** Outputs whose JSON is larger than this go to a file: 64 KiB, well under the store's 256 KiB per event. */
export const defaultMaxInlineOutputBytes = 64 * 1024;

export function isOutputsFileReference(value: unknown): value is OutputsFileReference {
  return value !== null && typeof value === 'object' && typeof (value as Record<string, unknown>).$outputsFile === 'string';
}

/** A file name for a step path (`systems[3].update` → `systems_3_.update.json`). */
const fileNameOf = (path: string): string => `${path.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`;

/**
 * The event to journal: a `step.finished` whose outputs are larger than `maxInlineBytes` has
 * them written to `<dir>/<runId>/<path>.json` and carries a reference instead.
 */
export async function spillLargeOutputs(event: JournalEvent, options: { dir: string; runId: string; maxInlineBytes: number }): Promise<JournalEvent> {
  if (event.type !== 'step.finished' || event.outputs === undefined) return event;
  const text = JSON.stringify(event.outputs);
  const bytes = Buffer.byteLength(text);
  if (bytes <= options.maxInlineBytes) return event;
  const folder = join(options.dir, options.runId);
  await mkdir(folder, { recursive: true });
  const file = join(folder, fileNameOf(event.path));
  await writeFile(file, text);
  const reference: OutputsFileReference = { $outputsFile: file, bytes };
  return { ...event, outputs: reference };
}

/** Outputs as the step produced them: a file reference read back, anything else as is. */
export async function readOutputs(value: unknown): Promise<unknown> {
  return isOutputsFileReference(value) ? (JSON.parse(await readFile(value.$outputsFile, 'utf8')) as unknown) : value;
}
