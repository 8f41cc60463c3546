/**
 * "Run again" and "retry failed" of a run, at every door (`fleetbook rerun`, the API, the run
 * page): the request of a new run of the same playbook with the same inputs, the secret ones
 * given again (they were never stored). It is admitted as any other (`admit`: role, windows and
 * freezes) and driven as any other: approvals and notifications apply.
 */
import { readSpilledInputs, retrySourceOf } from '../engine/index.js';
import { UsageError } from '../errors/index.js';
import type { Playbook } from '../playbook/index.js';
import type { RunRecord, RunStore } from '../store/index.js';
import { secretInputVariable } from './admit.js';
import type { RunRequest } from './run-request.js';

export interface RerunAsked {
  /** Retry only what failed (or never started); what succeeded is replayed from the run's journal. */
  failed: boolean;
  /** The secret inputs given again. */
  secretInputs: Record<string, unknown>;
  ignoreWindow?: { reason: string };
}

/** The secret inputs the run was given that are not given again: a default would change what it ran with. */
function checkSecrets(run: RunRecord, playbook: Playbook, given: Record<string, unknown>): void {
  for (const name of Object.keys(given))
    if (playbook.inputs[name]?.secret !== true)
      throw new UsageError(
        `'${name}' is not a secret input of ${playbook.name}: a rerun takes the run's own inputs and only its secret ones again (start a new run to change them)`,
        'INVALID_INPUTS',
        { field: `body/secretInputs/${name}` },
      );
  const missing = run.secretInputNames.filter(
    (name) => given[name] === undefined && !run.defaultedSecretInputs.includes(name),
  );
  if (missing.length > 0)
    throw new UsageError(
      `run ${run.id} was started with the secret input${missing.length === 1 ? '' : 's'} ${missing.map((name) => `'${name}'`).join(', ')} given; secrets are never stored, so give ${missing.length === 1 ? 'it' : 'them'} again (${missing.map(secretInputVariable).join(', ')})`,
      'SECRET_INPUT_MISSING',
      { field: `body/secretInputs/${missing[0]}` },
    );
}

/**
 * The request of a rerun of `run` with `playbook` (the playbook as it is now): refused, exit 2,
 * when a secret input is missing, or for a retry of a run that has not ended, succeeded, or ran
 * a playbook that changed since.
 */
export async function rerunRequest(
  store: RunStore,
  run: RunRecord,
  playbook: Playbook,
  asked: RerunAsked,
): Promise<Omit<RunRequest, 'target'>> {
  checkSecrets(run, playbook, asked.secretInputs);
  const retry = asked.failed ? await retrySourceOf(store, run, playbook) : undefined;
  return {
    playbook,
    inputs: { ...(await readSpilledInputs(run.inputs)), ...asked.secretInputs },
    trigger: { kind: 'manual' },
    dryRun: run.dryRun,
    rerun: { of: run.id, ...(retry ? { retry } : {}) },
    ...(asked.ignoreWindow ? { ignoreWindow: asked.ignoreWindow } : {}),
  };
}
