/**
 * The run an operator names on the command line: its whole id, or a prefix of it that names
 * one run only (the eight characters of a UUID are plenty), as `runs show` and `resume` take.
 */
import { UsageError, didYouMean } from '../errors/index.js';
import { resolveFleetbookHome, type RunRecord, type RunStore } from '../store/index.js';

/** Shortest prefix taken: a shorter one would too often name several runs. */
const MIN_PREFIX_LENGTH = 4;
/** Recent runs searched for a "did you mean". */
const SUGGESTION_POOL_SIZE = 200;

export async function findRun(
  store: Pick<RunStore, 'getRun' | 'listRuns'>,
  named: string,
  env: NodeJS.ProcessEnv,
): Promise<RunRecord> {
  const exact = await store.getRun(named);
  if (exact) return exact;
  if (named.length >= MIN_PREFIX_LENGTH) {
    const matching = await store.listRuns({ idPrefix: named, limit: 3 });
    if (matching.length === 1 && matching[0]) return matching[0];
    if (matching.length > 1) {
      throw new UsageError(
        `'${named}' names more than one run (${matching.map((run) => run.id).join(', ')}${matching.length === 3 ? ', ...' : ''}): give more of the id`,
        'AMBIGUOUS_RUN',
      );
    }
  }
  const recent = await store.listRuns({ limit: SUGGESTION_POOL_SIZE });
  throw new UsageError(
    `no run '${named}' in ${resolveFleetbookHome({ env })}.${didYouMean(
      named,
      recent.map((run) => run.id),
    )} Run 'fleetbook runs list' to see recent runs.`,
    'UNKNOWN_RUN',
  );
}
