/** Forgetting old runs: the store's rows and the files kept beside it (outputs, rehearsals' saved worlds). */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunStore } from './types.js';

/**
 * Deletes what a folder keeps for runs the store no longer has (pruned, or never recorded): an
 * entry is named by its run's id, alone (an outputs folder) or before its first dot (a saved
 * world, `<runId>.json`, `<runId>.in-use.json`).
 */
async function removeOrphans(folder: string, store: RunStore): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const runId = entry.name.split('.')[0]!;
    if (!(await store.getRun(runId))) await rm(join(folder, entry.name), { recursive: true, force: true });
  }
}

/**
 * Deletes the runs that ended before `before` (ISO) with their journals, and what the folders
 * `beside` (the outputs folder, the saved worlds' folder) keep for runs the store no longer has;
 * returns how many runs went. `onlyIfPruned`: look at the folders only when some run went (the
 * cheap form, for the end of every run).
 */
export async function pruneRuns(
  store: RunStore,
  before: string,
  beside: string | readonly string[],
  { onlyIfPruned = false }: { onlyIfPruned?: boolean } = {},
): Promise<number> {
  const pruned = await store.prune(before);
  if (pruned > 0 || !onlyIfPruned)
    for (const folder of typeof beside === 'string' ? [beside] : beside) await removeOrphans(folder, store);
  return pruned;
}
