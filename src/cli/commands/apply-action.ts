/**
 * What `fleetbook apply` does: reads and checks the plan file (its shape, its age, the playbook's
 * hash), then runs the playbook as `fleetbook run` does (door `cli.run`: the same admission) with
 * the plan's inputs, its target checked once connected and every write guarded by the plan.
 */
import { readFileSync } from 'node:fs';
import { parseDuration } from '../../expressions/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook } from '../../playbook/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { PLAN_VERSION, type PlanDocument } from './plan-view.js';
import { runLoaded, type RunCommandOptions } from './run-action.js';

export type ApplyCommandOptions = Omit<RunCommandOptions, 'inputs' | 'dryRun' | 'queue' | 'plan'> & { maxAge: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The plan file, its shape checked: a hand-edited or truncated file is refused, naming what is wrong. */
export function readPlanFile(file: string): PlanDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message}`, 'PLAN_INVALID');
  }
  let plan: unknown;
  try {
    plan = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${file}: not a plan (not JSON: ${(error as Error).message}); make one with fleetbook plan --out`,
      'PLAN_INVALID',
    );
  }
  const wrong = (what: string) =>
    new UsageError(`${file}: ${what}; make a new plan with fleetbook plan --out`, 'PLAN_INVALID');
  if (!isObject(plan)) throw wrong('not a plan (not a JSON object)');
  if (plan.planVersion !== PLAN_VERSION)
    throw wrong(`planVersion must be ${PLAN_VERSION}, got ${JSON.stringify(plan.planVersion)}`);
  for (const field of ['playbook', 'playbookSource', 'playbookHash', 'target', 'createdAt'] as const)
    if (typeof plan[field] !== 'string') throw wrong(`${field} must be a string`);
  if (!isObject(plan.inputs)) throw wrong('inputs must be an object');
  if (!Array.isArray(plan.writes)) throw wrong('writes must be a list');
  plan.writes.forEach((write, index) => {
    if (
      !isObject(write) ||
      typeof write.step !== 'string' ||
      typeof write.operationId !== 'string' ||
      !Array.isArray(write.changes)
    )
      throw wrong(`writes[${index}] must have step, operationId and changes`);
  });
  if (Number.isNaN(Date.parse(plan.createdAt as string))) throw wrong('createdAt must be a time');
  return plan as unknown as PlanDocument;
}

export async function applyAction(io: CliIo, file: string, options: ApplyCommandOptions): Promise<void> {
  const plan = readPlanFile(file);
  const maxAgeMs = parseDuration(options.maxAge);
  if (maxAgeMs === undefined)
    throw new UsageError(`--max-age must be a duration (e.g. 2h, 30m), got '${options.maxAge}'`, 'INVALID_OPTION');
  const ageMs = Date.now() - Date.parse(plan.createdAt);
  if (ageMs > maxAgeMs)
    throw new UsageError(
      `${file}: the plan was made at ${plan.createdAt}, more than ${options.maxAge} ago (--max-age); make a new plan`,
      'PLAN_TOO_OLD',
    );
  const loaded = loadPlaybook(plan.playbookSource, playbookLoadOptions(io.env));
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    io.stderr.write(`${formatProblems(loaded.problems)}\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  if (loaded.playbook.hash !== plan.playbookHash)
    throw new UsageError(
      `${file}: the plan is for another version of ${plan.playbook} (${plan.playbookSource} changed since): nothing was sent; make a new plan`,
      'PLAN_PLAYBOOK_CHANGED',
    );
  await runLoaded(io, loaded.playbook, { ...options, input: options.input, apply: plan });
}
