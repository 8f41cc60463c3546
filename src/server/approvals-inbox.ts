/**
 * The approvals inbox: every gate waiting for a decision that the caller may give (the operator
 * role, and one of the gate's `approvers` when it names any), the same list for the API
 * (`GET /api/v1/approvals`), the `/approvals` page and the count in the pages' navigation.
 */
import { RunStatus, TokenRole, type RunStore } from '../store/index.js';
import { roleAllows } from './tokens.js';

/** Waiting runs read for the inbox: more waiting at once is a queue no one decides by a list. */
const WAITING_READ = 500;

export interface PendingApproval {
  runId: string;
  playbook: string;
  /** The gate's step path. */
  gate: string;
  message?: string;
  /** ISO time the gate began to wait. */
  since: string;
  /** ISO time its timeout applies, when it has one, and what happens then. */
  deadline?: string;
  onTimeout?: string;
  /** Who started the run (the token or OS user), or how it started (a schedule). */
  startedBy: string;
  /** The run's page, where the gate is decided. */
  link: string;
}

/** The gates waiting for a decision `caller` may give, the oldest wait first. */
export async function pendingApprovals(
  store: Pick<RunStore, 'listRuns'>,
  caller: { name: string; role: TokenRole },
): Promise<PendingApproval[]> {
  if (!roleAllows(caller.role, TokenRole.operator)) return [];
  const waiting = await store.listRuns({ status: RunStatus.waiting, limit: WAITING_READ });
  const pending: PendingApproval[] = [];
  for (const run of waiting) {
    const wait = run.wait;
    if (wait?.reason !== 'approval') continue;
    if (wait.approvers && !wait.approvers.includes(caller.name)) continue;
    pending.push({
      runId: run.id,
      playbook: run.playbook,
      gate: wait.path,
      ...(wait.message === undefined ? {} : { message: wait.message }),
      since: wait.since,
      ...(wait.timeoutAt === undefined ? {} : { deadline: wait.timeoutAt }),
      ...(wait.onTimeout === undefined ? {} : { onTimeout: wait.onTimeout }),
      startedBy: run.trigger.by ?? (run.trigger.scheduleId ? `schedule ${run.trigger.scheduleId}` : run.trigger.kind),
      link: `/runs/${encodeURIComponent(run.id)}#approval-title`,
    });
  }
  return pending.sort((a, b) => a.since.localeCompare(b.since));
}
