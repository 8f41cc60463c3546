/**
 * An approval gate's policy, read by every door that decides and every view that shows a
 * waiting gate: who may decide (by name, by group), how many distinct approvals it needs, and
 * whether the run's requester is kept out. One place, so the CLI, the API and the pages refuse
 * and describe a gate in the same words.
 */
import type { WaitRecord } from '../store/index.js';
import { EngineErrorCode } from './error-codes.js';

/** Who decides: a name, and the groups a signed-in user has (none for a token or the CLI). */
export interface Decider {
  by: string;
  groups?: readonly string[];
  decision: 'approved' | 'denied';
}

type Policy = Pick<WaitRecord, 'path' | 'approvers' | 'approverGroups' | 'required' | 'notRequester' | 'approvals'>;

/** "a change-manager" for the group `change-managers`; "a member of sre" where no plural shows. */
function memberOf(group: string): string {
  if (group.length > 3 && group.endsWith('s') && !group.endsWith('ss')) {
    const one = group.slice(0, -1);
    return `${/^[aeiou]/i.test(one) ? 'an' : 'a'} ${one}`;
  }
  return `a member of ${group}`;
}

/** "alice", "alice and bob", "alice, bob and carol" (`and`), or with `or`. */
function listed(names: readonly string[], word: 'and' | 'or'): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} ${word} ${names.at(-1) ?? ''}`;
}

/** Whoever the gate's policy lets decide, in words (`notRequester` and the approvers so far left out). */
function stillWanted(policy: Policy, requester: string | undefined): string {
  const approved = (policy.approvals ?? []).map((approval) => approval.by);
  const excluded = [...new Set([...approved, ...(policy.notRequester && requester ? [requester] : [])])];
  const users = (policy.approvers ?? []).filter((user) => !excluded.includes(user));
  const groups = (policy.approverGroups ?? []).map(memberOf);
  const anyone = policy.approvers === undefined && policy.approverGroups === undefined;
  const who = anyone ? ['anyone'] : [...groups, ...users];
  if (who.length === 0) return 'nobody left who may approve';
  // Names left out matter where a group or anyone could hold them; listed users are already filtered.
  const unless = (anyone || groups.length > 0) && excluded.length > 0 ? ` other than ${listed(excluded, 'and')}` : '';
  return `${listed(who, 'or')}${unless}`;
}

/**
 * The waiting gate's progress in one sentence, as `fleetbook runs show` and the run page say it:
 * "1 of 2 approvals: alice; waiting for a change-manager other than alice and bob".
 */
export function approvalProgress(wait: Policy, requester: string | undefined): string {
  const approvals = wait.approvals ?? [];
  const required = wait.required ?? 1;
  const given = `${approvals.length} of ${required} approval${required === 1 ? '' : 's'}`;
  const names = approvals.length > 0 ? `: ${approvals.map((approval) => approval.by).join(', ')}` : '';
  return `${given}${names}; waiting for ${stillWanted(wait, requester)}`;
}

/** Why the gate's policy refuses `decider`, or undefined when it may decide. */
export function policyRefusal(
  wait: Policy,
  requester: string | undefined,
  decider: Decider,
): { message: string; code: string } | undefined {
  const { by } = decider;
  const groups = decider.groups ?? [];
  const anyone = wait.approvers === undefined && wait.approverGroups === undefined;
  const byName = wait.approvers?.includes(by) ?? false;
  const byGroup = wait.approverGroups?.some((group) => groups.includes(group)) ?? false;
  if (!anyone && !byName && !byGroup) {
    const allowed = [
      ...(wait.approvers ? [`users ${wait.approvers.join(', ')}`] : []),
      ...(wait.approverGroups ? [`groups ${wait.approverGroups.join(', ')}`] : []),
    ].join('; ');
    const theirs =
      groups.length > 0
        ? `${by}'s groups: ${groups.join(', ')}`
        : `${by} has no groups (a token or the CLI decides by name only)`;
    return {
      message: `${by} is not an approver of ${wait.path} (approvers: ${allowed}; ${theirs})`,
      code: EngineErrorCode.notAnApprover,
    };
  }
  if (wait.notRequester && requester !== undefined && requester === by)
    return {
      message: `${by} started this run, and the gate ${wait.path} may not be decided by the person who started or triggered it (notRequester); ${approvalProgress(wait, requester)}`,
      code: EngineErrorCode.approverIsRequester,
    };
  const earlier = wait.approvals?.find((approval) => approval.by === by);
  if (decider.decision === 'approved' && earlier)
    return {
      message: `${by} already approved ${wait.path} at ${earlier.at}; it needs distinct approvers: ${approvalProgress(wait, requester)}`,
      code: EngineErrorCode.alreadyApproved,
    };
  return undefined;
}
