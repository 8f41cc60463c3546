/** What `fleetbook approve` and `deny` do (see approve.ts), imported when the command runs. */
import { userInfo } from 'node:os';
import { approvalProgress, formInputs, recordApproval } from '../../engine/index.js';
import { isFleetbookError, UsageError } from '../../errors/index.js';
import { isQueueStore, openRunStore, RunStatus, type RunRecord, type RunStore } from '../../store/index.js';
import { postToServer, remoteRunSource, serverSettings, type ServerSettings } from '../remote-runs.js';
import { platformSettings, profileStore } from '../connection.js';
import { connectionForResume, savedWorldPath } from '../saved-world.js';
import type { CliIo } from '../io.js';
import { findRun } from '../find-run.js';
import { isMachineFormat, outputFormat, writeMachine } from '../output.js';
import { refuseLostSimulatorState, resumeAction, type ResumeCommandOptions } from './resume-action.js';

export interface DecideCommandOptions extends Omit<ResumeCommandOptions, 'force' | 'confirmUnknown'> {
  step?: string;
  comment?: string;
  input?: string[];
}

/** `-i name=value` pairs as text: the gate's declared types read them (`formInputs`). */
function formValues(pairs: readonly string[] = []): Record<string, string> {
  // No prototype: `-i __proto__=x` is a name like any other, refused as unknown by the form.
  const values = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`-i expects name=value, got '${pair}'.`, 'INVALID_OPTION');
    values[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return values;
}

/** The OS user deciding: what the journal records as `by` (a server records its token's name). */
function currentUser(): string {
  return userInfo().username;
}

/** The decision recorded by a server (FLEETBOOK_SERVER), by its token's name; the server continues the run. */
async function decideOnServer(
  io: CliIo,
  server: ServerSettings,
  named: string,
  decision: 'approved' | 'denied',
  options: DecideCommandOptions,
): Promise<void> {
  const run = await findRun(remoteRunSource(server), named, io.env);
  // The API takes typed values, as for a run's inputs: the text is read by the gate's types here.
  const inputs = formInputs(run.wait, formValues(options.input));
  const answer = await postToServer<{ run: RunRecord }>(
    server,
    `/api/v1/runs/${encodeURIComponent(run.id)}/${decision === 'approved' ? 'approve' : 'deny'}`,
    {
      ...(options.comment === undefined ? {} : { comment: options.comment }),
      ...(options.step === undefined ? {} : { step: options.step }),
      ...(decision === 'approved' && Object.keys(inputs).length > 0 ? { inputs: { ...inputs } } : {}),
    },
  );
  const format = outputFormat(options);
  if (isMachineFormat(format)) writeMachine(io, format, { runId: run.id, decision, status: answer.run.status });
  else io.stdout.write(`run ${run.id}: ${decision} on ${server.url}; the run is ${answer.run.status}\n`);
}

/**
 * Refuses (exit 2, nothing recorded) a decision this process could not act on: with the local
 * store the deciding process continues the run, so it needs what the run runs against (its
 * saved world, `--target simulator`, or a platform's settings) before the decision is written.
 * With a shared store a worker continues the run: nothing to check here.
 */
async function checkCanContinue(io: CliIo, store: RunStore, run: RunRecord, options: DecideCommandOptions) {
  // A run that does not wait is refused by recordApproval, with its own reason.
  if (isQueueStore(store) || run.status !== RunStatus.waiting) return;
  const target = connectionForResume(io.env, run.id, options.target);
  if (target.restore) return;
  if (target.target === 'simulator') return refuseLostSimulatorState(run.id, await store.journal(run.id));
  try {
    platformSettings({ env: io.env, profile: options.profile });
  } catch (error) {
    if (!isFleetbookError(error) || error.code !== 'NO_CONNECTION') throw error;
    const missing = (error.details?.missing as string[] | undefined) ?? [];
    throw new UsageError(
      `run ${run.id}: nothing was recorded, the gate still waits. Deciding continues the run in this process, and it has nothing to continue it against: ` +
        `no saved simulator world of the run (${savedWorldPath(io.env, run.id)}) and no platform (${missing.join(', ')} not set). ` +
        'Set the FLEETBOOK_* variables of the platform the run ran against (or --profile), or give --target simulator to continue it on a new embedded simulator; then decide again.',
      'NO_CONNECTION',
      error.details,
    );
  }
}

export async function decideAction(
  io: CliIo,
  named: string,
  decision: 'approved' | 'denied',
  options: DecideCommandOptions,
): Promise<void> {
  if (decision === 'denied' && (options.comment ?? '').trim() === '')
    throw new UsageError('deny needs --comment <why>: the gate fails with it', 'INVALID_OPTION');
  const server = serverSettings(io.env);
  if (server) return decideOnServer(io, server, named, decision, options);
  const store = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  let recorded: Awaited<ReturnType<typeof recordApproval>>;
  try {
    const run = await findRun(store, named, io.env);
    await checkCanContinue(io, store, run, options);
    recorded = await recordApproval(
      store,
      {
        runId: run.id,
        decision,
        by: currentUser(),
        ...(options.comment === undefined ? {} : { comment: options.comment }),
        ...(options.step === undefined ? {} : { step: options.step }),
        ...(decision === 'approved' ? { inputs: formInputs(run.wait, formValues(options.input)) } : {}),
      },
      Date.now,
    );
  } finally {
    await store.close();
  }
  const { run, wait, refused } = recorded;
  const said = refused
    ? `run ${run.id}: ${wait.path} timed out before this ${decision === 'approved' ? 'approval' : 'denial'}, so its onTimeout (${wait.onTimeout ?? 'fail'}) applies`
    : `run ${run.id}: ${wait.path} ${decision} by ${recorded.decision.by}${recorded.decision.comment ? ` (${recorded.decision.comment})` : ''}`;
  if (recorded.status === RunStatus.waiting) {
    // Counted towards the gate's `required`: the run waits for the others.
    const progress = approvalProgress(wait, run.trigger.by);
    const format = outputFormat(options);
    if (isMachineFormat(format))
      writeMachine(io, format, {
        runId: run.id,
        gate: wait.path,
        decision: recorded.decision,
        status: 'waiting',
        progress,
      });
    else io.stdout.write(`${said}; ${progress}\n`);
  } else if (recorded.status === RunStatus.queued) {
    // Team mode: a worker claims the run and resumes it from the gate.
    const format = outputFormat(options);
    if (refused) io.stderr.write(`fleetbook: ${said}; queued for a worker to continue it\n`);
    else if (isMachineFormat(format))
      writeMachine(io, format, { runId: run.id, gate: wait.path, decision: recorded.decision, status: 'queued' });
    else io.stdout.write(`${said}; queued for a worker to continue it\n`);
  } else {
    io.stderr.write(`fleetbook: ${said}; continuing the run\n`);
    await resumeAction(io, run.id, options);
  }
  // Too late: the run went on as its gate's onTimeout says, and the decider is told (exit 2).
  if (refused) throw refused;
}
