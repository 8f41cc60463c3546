/** Forgetting old runs: the store's rows and the output files kept beside it. */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunStore } from './types.js';

/** Deletes the output folders of runs the store no longer has (pruned, or never recorded). */
async function removeOrphanOutputs(outputsDir: string, store: RunStore): Promise<void> {
  const folders = await readdir(outputsDir, { withFileTypes: true }).catch(() => []);
  for (const folder of folders) {
    if (folder.isDirectory() && !(await store.getRun(folder.name)))
      await rm(join(outputsDir, folder.name), { recursive: true, force: true });
  }
}

/**
 * Deletes the runs that ended before `before` (ISO) with their journals, and the output folders
 * of runs the store no longer has; returns how many runs went. `onlyIfPruned`: look at the
 * folders only when some run went (the cheap form, for the end of every run).
 */
export async function pruneRuns(
  store: RunStore,
  before: string,
  outputsDir: string,
  { onlyIfPruned = false }: { onlyIfPruned?: boolean } = {},
): Promise<number> {
  const pruned = await store.prune(before);
  if (pruned > 0 || !onlyIfPruned) await removeOrphanOutputs(outputsDir, store);
  return pruned;
}
