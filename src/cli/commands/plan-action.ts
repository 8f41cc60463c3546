/**
 * What `fleetbook plan` does after its dry run: gathers the planned writes from the run's
 * steps, prints the plan (text or JSON) and writes it to `--out`. The run itself is a dry run
 * through the same door as `fleetbook run --dry-run` (run-action.ts): same admission, no write.
 */
import { writeFileSync } from 'node:fs';
import type { Admission } from '../../admission/index.js';
import type { RunResult } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { RunStatus } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { writeMachine } from '../output.js';
import type { Connection } from '../connection.js';
import type { ProcessHost } from '../process-host.js';
import { createPlanGuard, type PlanGuard } from '../../steps/index.js';
import { formatPlan, plannedWrites, PLAN_VERSION, readsSent, summaryOf, type PlanDocument } from './plan-view.js';

export async function reportPlan(
  io: CliIo,
  ran: { host: ProcessHost; admission: Admission; result: RunResult; target: string },
  options: { plan?: { out?: string }; output?: string },
): Promise<void> {
  const { host, admission, result } = ran;
  const records = await host.parts.store.steps(result.runId);
  const secret = new Set(admission.inputs.secretNames);
  const writes = plannedWrites(records);
  const plan: PlanDocument = host.parts.secrets.scrubValue({
    planVersion: PLAN_VERSION,
    playbook: admission.request.playbook.name,
    playbookHash: admission.request.playbook.hash,
    playbookSource: admission.request.playbook.source,
    inputs: Object.fromEntries(Object.entries(admission.request.inputs).filter(([name]) => !secret.has(name))),
    target: targetIdentity(ran.target),
    createdAt: new Date().toISOString(),
    runId: result.runId,
    writes,
    reads: readsSent(records),
    summary: summaryOf(writes),
  });
  const out = options.plan?.out;
  if (out !== undefined) {
    try {
      writeFileSync(out, `${JSON.stringify(plan, null, 2)}\n`);
    } catch (error) {
      throw new UsageError(`--out ${out}: ${(error as Error).message}`, 'INVALID_OPTION');
    }
  }
  if (options.output === 'json' || options.output === 'yaml') writeMachine(io, options.output, plan);
  else io.stdout.write(formatPlan(plan));
  if (result.status !== RunStatus.succeeded) {
    // The plan so far is shown; the run's failure says why it is not the whole plan.
    io.stderr.write(
      `fleetbook: the plan is incomplete: its dry run ${result.status}${result.error ? `: ${host.parts.secrets.scrub(result.error.message)}` : ''}\n`,
    );
    io.exitCode = ExitCode.runFailed;
    return;
  }
  if (out !== undefined && options.output !== 'json') io.stdout.write(`Saved the plan to ${out}.\n`);
  io.exitCode = ExitCode.success;
}

/** What a plan was made against: the platform's address and client, or the embedded simulator (its port left out). */
export function targetIdentity(description: string): string {
  return description.replace(/^the embedded simulator at \S+ \(.*$/, 'the embedded simulator');
}

/** The guard of `fleetbook apply` on this connection, once its target is the plan's (else exit 2, nothing sent). */
export function planGuardFor(plan: PlanDocument, connection: Connection): PlanGuard {
  const target = targetIdentity(connection.description);
  if (target !== plan.target)
    throw new UsageError(
      `the plan was made against ${plan.target}, and this apply would run against ${target}: nothing was sent`,
      'PLAN_TARGET_MISMATCH',
    );
  return createPlanGuard(connection.client, plan.writes);
}
