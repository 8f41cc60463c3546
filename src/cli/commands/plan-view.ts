/**
 * `fleetbook plan`'s result: the writes a dry run planned (each step's `outputs.plan`), as a
 * document (`--out plan.json`, `-o json`) and as the text a person reads in one go.
 */
import type { StepRecord } from '../../store/index.js';
import type { PlannedWrite } from '../../steps/index.js';

export const PLAN_VERSION = 1;

export interface PlanDocument {
  planVersion: number;
  playbook: string;
  /** The playbook's hash: an apply of another version of it is refused. */
  playbookHash: string;
  /** The playbook file the plan was made from: what apply loads (and checks against the hash). */
  playbookSource: string;
  /** The inputs given, secret ones left out. */
  inputs: Record<string, unknown>;
  target: string;
  createdAt: string;
  runId: string;
  /** Each write as planned, with the step that sends it and the request it would send (method, URL). */
  writes: Array<PlannedWrite & { step: string; request?: { method: string; url: string } }>;
  reads: number;
  summary: { add: number; change: number; delete: number; run: number };
}

const SYMBOLS: Record<PlannedWrite['change'], string> = { create: '+', update: '~', delete: '-', action: '>' };

/** The planned writes of a dry run's step records, in the order the steps started. */
export function plannedWrites(records: readonly StepRecord[]): PlanDocument['writes'] {
  const writes: PlanDocument['writes'] = [];
  for (const record of records) {
    const plan = (record.outputs as { plan?: PlannedWrite } | undefined)?.plan;
    if (record.status === 'simulated' && plan) writes.push({ step: record.path, ...plan });
  }
  return writes;
}

/** Reads the plan sent: the `call` steps that succeeded (a write is simulated, never succeeded). */
export function readsSent(records: readonly StepRecord[]): number {
  return records.filter((record) => record.kind === 'call' && record.status === 'succeeded').length;
}

export function summaryOf(writes: PlanDocument['writes']): PlanDocument['summary'] {
  const count = (change: PlannedWrite['change']) => writes.filter((write) => write.change === change).length;
  // An action whose effect the description states (an update's versions) changes the resource.
  const effective = writes.filter((write) => write.change === 'action' && write.changes.length > 0).length;
  return {
    add: count('create'),
    change: count('update') + effective,
    delete: count('delete'),
    run: count('action') - effective,
  };
}

const shown = (value: unknown): string => (value === undefined ? '(none)' : JSON.stringify(value));

/** The plan as text: one line per write, its field changes under it, and the summary line. */
export function formatPlan(plan: Pick<PlanDocument, 'writes' | 'reads' | 'summary'>): string {
  const width = Math.max(0, ...plan.writes.map((write) => write.operationId.length));
  const lines: string[] = [];
  for (const write of plan.writes) {
    const id = write.id !== undefined && write.id !== write.resource ? ` (id ${write.id})` : '';
    const change = write.change === 'action' && write.changes.length > 0 ? '~' : SYMBOLS[write.change];
    lines.push(`${change} ${write.operationId.padEnd(width)}  ${write.resource}${id}  [${write.step}]`);
    for (const field of write.changes) lines.push(`    ${field.path}: ${shown(field.from)} -> ${shown(field.to)}`);
    if (write.readError) lines.push(`    could not read it: ${write.readError}`);
  }
  const { add, change, delete: deleted, run } = plan.summary;
  if (plan.writes.length === 0) lines.push('No changes: the playbook sends no write with these inputs.');
  lines.push(
    `Plan: ${add} to add, ${change} to change, ${deleted} to delete, ${run} to run; ${plan.reads} read${plan.reads === 1 ? '' : 's'}.`,
  );
  return `${lines.join('\n')}\n`;
}
