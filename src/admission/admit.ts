/**
 * The one admission of every run a door asks for: the caller's role, the inputs (secret ones
 * included), the maintenance windows and freezes, and a triggered schedule's overlap. Every
 * refusal is a `UsageError` (exit 2; through the server 403 or 409) naming what is refused and
 * where; nothing is recorded or sent before `admit` says yes. Checks with effects (the overlap
 * policy cancels or queues behind the schedule's previous run) come last, after every check
 * that can refuse.
 */
import { resolveInputs, type ResolvedInputs } from '../engine/index.js';
import { UsageError } from '../errors/index.js';
import { timeRulesOf, type ScheduleSpec } from '../playbook/index.js';
import { decideTrigger, fireRefusal, startGateOfRun, windowRefusal, type WindowRefusal } from '../scheduler/index.js';
import { AuditAction, TokenRole, type AuditActor, type RunStore } from '../store/index.js';
import type { StartGate } from '../windows/index.js';
import { AdmissionErrorCode } from './error-codes.js';
import { Door, type Caller, type RunRequest } from './run-request.js';

const ROLE_ORDER: readonly TokenRole[] = [TokenRole.viewer, TokenRole.operator, TokenRole.admin];

function allows(role: TokenRole, needed: TokenRole): boolean {
  return ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(needed);
}

/** The trigger an admitted run records. */
export interface AdmittedTrigger {
  kind: RunRequest['trigger']['kind'];
  scheduleId?: string;
  by?: string;
  ignoredWindow?: string;
  rerunOf?: string;
  retriedFailed?: boolean;
}

/** What a run admitted goes on with. */
export interface Admission {
  request: RunRequest;
  caller: Caller;
  inputs: ResolvedInputs;
  /** What the run records as its trigger (`by`, the schedule, a window ignored and why). */
  trigger: AdmittedTrigger;
  /** When its loops may start an item: none for a dry run or an ignored window, else its windows. */
  startGate: StartGate | null;
  /** The window or freeze that was closed when it was admitted anyway (a dry run, `ignoreWindow`). */
  windowClosed?: WindowRefusal;
  /** A triggered schedule's overlap: the previous run it cancelled, or the fire queued behind it (no run now). */
  overlap?: { cancelled: string } | { queuedBehind: string };
}

export interface AdmissionContext {
  /** Read for a triggered schedule's previous run (its overlap policy). */
  store: RunStore;
  now: () => number;
}

function scheduleOf(request: RunRequest): ScheduleSpec | undefined {
  return request.trigger.kind === 'manual' ? undefined : request.trigger.schedule;
}

function checkRole(request: RunRequest, caller: Caller): void {
  const role = caller.roleFor?.(request.playbook.name) ?? caller.role;
  const of = caller.roleFor ? ` for ${request.playbook.name}` : '';
  if (!allows(role, TokenRole.operator))
    throw new UsageError(
      `${caller.name} (role ${role}${of}) may not start runs: that takes the operator role`,
      AdmissionErrorCode.roleForbidden,
    );
  if (request.ignoreWindow && !allows(role, TokenRole.admin))
    throw new UsageError(
      `${caller.name} (role ${role}${of}) may not start a run outside its maintenance window or inside a freeze: that takes the admin role`,
      AdmissionErrorCode.roleForbidden,
      { field: 'body/ignoreWindow' },
    );
  if (request.ignoreWindow && request.ignoreWindow.reason.trim() === '')
    throw new UsageError(
      'ignoring the maintenance window needs a reason, recorded with the run',
      AdmissionErrorCode.ignoreWindowReason,
      { field: 'body/ignoreWindow/reason' },
    );
}

/** Secret inputs are never stored: a queued run cannot carry one given now (a worker reads its own). */
function checkSecretInputs(request: RunRequest, inputs: ResolvedInputs): void {
  if (request.target !== 'queue') return;
  const given = inputs.secretNames.filter((name) => request.inputs[name] !== undefined);
  if (given.length === 0) return;
  const names = given.map((name) => `'${name}'`).join(', ');
  throw new UsageError(
    `the secret input${given.length === 1 ? '' : 's'} ${names} would have to be stored to queue this run, and secrets never are: give ${given.length === 1 ? 'it' : 'them'} to the workers (${given.map(secretInputVariable).join(', ')})`,
    AdmissionErrorCode.secretInputQueued,
    { field: `body/inputs/${given[0]}` },
  );
}

/** `FLEETBOOK_INPUT_<NAME>`: the variable a worker or a resume reads a secret input from. */
export function secretInputVariable(name: string): string {
  return `FLEETBOOK_INPUT_${name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]/g, '_')
    .toUpperCase()}`;
}

/** The window or freeze closed now (a fire: at its time or now), or undefined when the run may start. */
export function closedWindow(request: RunRequest, nowMs: number): WindowRefusal | undefined {
  const { playbook, trigger } = request;
  if (trigger.kind === 'schedule') return fireRefusal(playbook, trigger.schedule, trigger.scheduledAtMs, nowMs);
  return windowRefusal(timeRulesOf(playbook, scheduleOf(request)), nowMs);
}

/** How the caller's door asks to ignore a window, for the refusal's last words. */
function ignoreHint(door: Door): string {
  if (door === Door.apiStart || door === Door.apiTrigger || door === Door.apiRerun)
    return 'with ignoreWindow: { reason } (admin role)';
  if (door === Door.uiStart || door === Door.uiTrigger || door === Door.uiRerun)
    return 'through the API with ignoreWindow (admin role)';
  return 'with --ignore-window';
}

function checkWindow(request: RunRequest, caller: Caller, nowMs: number): WindowRefusal | undefined {
  const closed = closedWindow(request, nowMs);
  if (!closed || request.dryRun || request.ignoreWindow) return closed;
  const what = request.trigger.kind === 'manual' ? request.playbook.name : `schedule ${scheduleOf(request)?.key}`;
  throw new UsageError(
    `${what} may not start now: ${closed.reason}. Run it then, or now ${ignoreHint(caller.door)}.`,
    AdmissionErrorCode.outsideWindow,
    { code: closed.code, reason: closed.reason },
  );
}

/**
 * The trigger the run records. A window ignored is recorded whether or not it was closed at the
 * start: the run's loops then start every item whatever the time, in this process or a worker's
 * (`startGateOfRun` reads it), and the record says who decided it and why.
 */
function recordedTrigger(request: RunRequest, caller: Caller, closed: WindowRefusal | undefined): AdmittedTrigger {
  const schedule = scheduleOf(request);
  const ignoring = request.ignoreWindow && !request.dryRun;
  const ignored = ignoring
    ? `${closed ? `${closed.reason}; ` : ''}ignored by ${caller.name}: ${request.ignoreWindow?.reason}`
    : undefined;
  return {
    kind: request.trigger.kind,
    ...(schedule ? { scheduleId: schedule.key } : {}),
    ...(request.trigger.kind === 'schedule' ? {} : { by: caller.name }),
    ...(ignored ? { ignoredWindow: ignored } : {}),
    ...(request.rerun ? { rerunOf: request.rerun.of } : {}),
    ...(request.rerun?.retry ? { retriedFailed: true } : {}),
  };
}

/**
 * Admits `request` from `caller` or refuses it (a `UsageError`, exit 2, located). The order is
 * the policy: who may, what is given, when, and last the overlap with a triggered schedule's
 * previous run, which may cancel it (so nothing is cancelled for a run then refused).
 */
export async function admit(request: RunRequest, caller: Caller, context: AdmissionContext): Promise<Admission> {
  // Every door that starts a run comes through here: its start is audited once, here, refusals too.
  const entry = {
    actor: auditActorOf(caller),
    action: AuditAction.runStart,
    object: { kind: 'playbook', id: request.playbook.name },
  };
  const detail = { door: caller.door, trigger: request.trigger.kind, dryRun: request.dryRun, target: request.target };
  try {
    const admission = await admitChecked(request, caller, context);
    await context.store.appendAudit({ ...entry, outcome: 'ok', detail });
    return admission;
  } catch (error) {
    const code = (error as { code?: unknown }).code?.toString() ?? 'ERROR';
    await context.store.appendAudit({ ...entry, outcome: 'refused', detail: { ...detail, error: code } });
    throw error;
  }
}

/** The audit log's actor of a door's caller: the scheduler, a person at the CLI, or a token of the server. */
export function auditActorOf(caller: Caller): AuditActor {
  const kind =
    caller.door.startsWith('daemon.') || caller.door.startsWith('worker.')
      ? 'system'
      : caller.door.startsWith('cli.')
        ? 'user'
        : 'token';
  return { kind, name: caller.name, role: caller.role, ...(caller.address ? { address: caller.address } : {}) };
}

async function admitChecked(request: RunRequest, caller: Caller, context: AdmissionContext): Promise<Admission> {
  checkRole(request, caller);
  const inputs = resolveInputs(request.playbook.inputs, request.inputs, request.playbook.name);
  checkSecretInputs(request, inputs);
  const nowMs = context.now();
  const windowClosed = checkWindow(request, caller, nowMs);
  const trigger = recordedTrigger(request, caller, windowClosed);
  const admission: Admission = {
    request,
    caller,
    inputs,
    trigger,
    startGate: startGateOfRun(request.playbook, { trigger, dryRun: request.dryRun }),
    ...(windowClosed ? { windowClosed } : {}),
  };
  if (request.trigger.kind !== 'trigger') return admission;
  const decision = await decideTrigger(context.store, request.trigger.schedule, caller.name, nowMs);
  if (decision.action === 'queued') return { ...admission, overlap: { queuedBehind: decision.behind } };
  return decision.cancelled ? { ...admission, overlap: { cancelled: decision.cancelled } } : admission;
}
