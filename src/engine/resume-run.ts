/** `resumeRun`: a run continued from its journal, after the checks that refuse what a resume must not do. */
import type { PlatformClient } from '../api/index.js';
import { UsageError } from '../errors/index.js';
import { createSecretRegistry } from '../logging/index.js';
import { type Playbook } from '../playbook/index.js';
import { reconciliationOf } from '../steps/index.js';
import { journalPages, JOURNAL_PAGE_SIZE } from '../store/index.js';
import { RunStatus, type JournalEntry, type RunRecord } from '../store/index.js';
import { resolveInputs } from './inputs.js';
import { bindInputSettings } from './input-settings.js';
import { readSpilledInputs } from './large-values.js';
import { createResumePlan, replayedStatuses, type InFlightRequest, type ResumePlan } from './resume-plan.js';
import { decisionsOf, endWaitForResume } from './run-waits.js';
import { systemClock } from '../timers/index.js';
import { type ResumeOptions, type RunResult } from './run-options.js';
import { holdLease } from './run-lease.js';
import { execute } from './run-playbook.js';
/** Top-level step ids of the journal that the playbook no longer has, for the refusal's reason. */
function changedSteps(playbook: Playbook, plan: ResumePlan): string[] {
  const ids = new Set(playbook.steps.map((step) => step.id));
  const gone = new Set<string>();
  for (const path of plan.records.keys()) {
    const top = /^[A-Za-z_][A-Za-z0-9_]*/.exec(path)?.[0];
    if (top && !ids.has(top)) gone.add(top);
  }
  return [...gone];
}

/** The operation id `http` steps journal their requests under (steps/executors/http.ts). */
const WEBHOOK = 'http';
/** The operation id `email` steps journal their sends under: the step decides by its `onUnknown`. */
const EMAIL = 'email';

/**
 * Why a request of unknown outcome cannot be reconciled, or undefined when it can (or needs
 * not be: a read). A webhook that is not a GET may have notified, opened a ticket or called
 * back; nothing on the platform tells, so only the operator can say whether to send it again.
 */
function cannotReconcile(request: InFlightRequest, client: PlatformClient): string | undefined {
  if (request.operationId === EMAIL) return undefined;
  if (request.operationId === WEBHOOK) {
    // A journal from before methods were kept: the executor's default is POST.
    const method = (request.method ?? 'POST').toUpperCase();
    return method === 'GET' || method === 'HEAD'
      ? undefined
      : 'a webhook leaves nothing the platform can show; sending it again may notify or act twice';
  }
  if (!client.catalogue.byId.get(request.operationId)?.isWrite) return undefined;
  const rule = reconciliationOf(request.operationId);
  return rule.kind === 'cannot' ? rule.reason : undefined;
}

/** Refuses what a resume must not do: an unknown or finished run, a changed playbook, unreconcilable writes. */
function checkResumable(
  run: RunRecord | undefined,
  runId: string,
  playbook: Playbook,
  plan: ResumePlan,
  options: ResumeOptions,
): asserts run is RunRecord {
  if (!run)
    throw new UsageError(`no run ${runId} in the store (\`fleetbook runs list\` shows the runs)`, 'RUN_NOT_FOUND');
  if (run.status === RunStatus.succeeded)
    throw new UsageError(`run ${runId} succeeded; there is nothing to resume`, 'RUN_SUCCEEDED');
  if (run.status === RunStatus.cancelled)
    throw new UsageError(
      `run ${runId} was cancelled${run.error?.details && typeof (run.error.details as { by?: unknown }).by === 'string' ? ` by ${(run.error.details as { by: string }).by}` : ''}; a cancelled run is not resumed (start a new run)`,
      'RUN_CANCELLED',
    );
  if (run.playbookHash !== playbook.hash && !options.force) {
    const gone = changedSteps(playbook, plan);
    throw new UsageError(
      `the playbook ${playbook.name} changed since run ${runId} started (its normalised hash differs${gone.length > 0 ? `; steps no longer there: ${gone.join(', ')}` : ''}). ` +
        'Resume with --force to continue with the playbook as it is now.',
      'PLAYBOOK_CHANGED',
    );
  }
  if (options.confirmUnknown) return;
  const unreconcilable = [...plan.inFlight]
    .filter(
      ([path, request]) => request.state === 'unknown' && !replayedStatuses.has(plan.records.get(path)?.status ?? ''),
    )
    .map(([path, request]) => ({ path, request, reason: cannotReconcile(request, options.client) }))
    .filter((found): found is { path: string; request: InFlightRequest; reason: string } => found.reason !== undefined);
  if (unreconcilable.length > 0) {
    const list = unreconcilable
      .map(
        ({ path, request, reason }) =>
          `${path} (${request.operationId === WEBHOOK ? `${request.method ?? ''} webhook` : request.operationId}: ${reason})`,
      )
      .join('; ');
    throw new UsageError(
      `run ${runId} sent writes whose outcome is unknown and cannot be reconciled: ${list}. Check the platform; resume with --confirm-unknown to send them again.`,
      'OUTCOME_UNKNOWN',
    );
  }
}

/**
 * Continues a run that was interrupted, crashed or failed: steps that succeeded are replayed
 * from the journal, a wait in flight re-attaches to its Location, a write of unknown outcome
 * is reconciled before it is sent again, failed steps run again. See docs/resume.md.
 */
export async function resumeRun(playbook: Playbook, options: ResumeOptions): Promise<RunResult> {
  const { store, runId } = options;
  const now = (options.clock ?? systemClock).now;
  const startedMs = now();
  const { retentionMs } = options;
  const lease = await holdLease(store, runId, options);
  try {
    let run = await store.getRun(runId);
    if (run?.status === RunStatus.waiting) {
      // Before its time a refusal saying how to end the wait; after it, ended as the sweep would.
      await endWaitForResume(store, run, now);
      run = await store.getRun(runId);
    }
    // Read without the steps' values (cut by the store), in pages: a fleet's journal is mostly API
    // answers, and a replay needs the outputs of few steps, read back one entry each.
    const journal: JournalEntry[] = [];
    for await (const page of journalPages(store, runId, JOURNAL_PAGE_SIZE, { values: false })) journal.push(...page);
    const plan = createResumePlan(journal, options.confirmUnknown, async (seq) => {
      const [entry] = await store.journal(runId, seq - 1, 1);
      return entry?.seq === seq ? entry.event : undefined;
    });
    checkResumable(run, runId, playbook, plan, options);
    checkSecretInputs(run, options.secretInputs ?? {});
    const secrets = options.secrets ?? createSecretRegistry();
    const resolved = resolveInputs(
      playbook.inputs,
      { ...(await readSpilledInputs(run.inputs)), ...options.secretInputs },
      playbook.name,
    );
    for (const name of resolved.secretNames) secrets.add(String(resolved.values[name]));
    const bound = await bindInputSettings(playbook, resolved.values);
    if (options.countAsResume !== false) await store.markResumed(runId);
    return await execute(bound, options, {
      runId,
      dryRun: run.dryRun,
      signal: lease.signal,
      leaseLost: lease.lost,
      cancelled: lease.cancelled,
      startedMs,
      startedAt: run.startedAt,
      secrets,
      values: resolved.values,
      now,
      resume: plan,
      decisions: decisionsOf(journal),
      retentionMs,
      trigger: run.trigger,
      occurrence: `r${run.resumes + (options.countAsResume !== false ? 1 : 0)}`,
    });
  } finally {
    await lease.release();
  }
}

/**
 * A secret input given when the run started must be given again (it was never stored): taking
 * its default instead would resume with another value than the run had.
 */
function checkSecretInputs(run: RunRecord, given: Record<string, unknown>): void {
  const missing = run.secretInputNames.filter(
    (name) => given[name] === undefined && !run.defaultedSecretInputs.includes(name),
  );
  if (missing.length > 0) {
    throw new UsageError(
      `run ${run.id} was started with the secret input${missing.length === 1 ? '' : 's'} ${missing.map((name) => `'${name}'`).join(', ')} given; secrets are never stored, so give ${missing.length === 1 ? 'it' : 'them'} again to resume`,
      'SECRET_INPUT_MISSING',
    );
  }
}
