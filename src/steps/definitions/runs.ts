import { closedObject, described } from './value-types.js';
import { duration, orExpression } from './schema-parts.js';
import type { StepBase, Template } from '../../model/index.js';
import type { RunStatus } from '../../store/index.js';
import { executeRuns, type RunsQuery } from '../executors/runs.js';
import { defineLeaf } from './step-definition.js';

export interface RunsStep extends StepBase {
  kind: 'runs';
  /** A duration back from the run's now, or an expression yielding one, milliseconds or an ISO timestamp. */
  since?: Template;
  status?: RunStatus;
  playbook?: string;
  limit: number;
}

const DEFAULT_LIMIT = 200;
/** The store's run statuses (its `RunStatus`; a step may import only its types): every one is named, the check holds. */
const STATUSES = {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  interrupted: 'interrupted',
  waiting: 'waiting',
  cancelled: 'cancelled',
} as const satisfies Record<RunStatus, RunStatus>;
const MAX_LIMIT = 1000;

const RUN_TYPE = closedObject({
  id: { type: 'string' },
  playbook: { type: 'string' },
  status: { enum: Object.values(STATUSES) },
  startedAt: described({ type: 'string' }, 'ISO timestamp.'),
  endedAt: described({ type: 'string' }, 'ISO timestamp; absent while the run has not ended.'),
  errorCode: described({ type: 'string' }, "The code of the run's error (docs/errors.md); absent without one."),
});

export const runsStep = defineLeaf<RunsStep>({
  kind: 'runs',
  description:
    'Lists runs of the run store this run is recorded in (newest first): id, playbook, status, start, end and error code; never inputs, outputs or messages. Reads only. Outputs: runs, count.',
  fields: {
    runs: {
      type: 'object',
      additionalProperties: false,
      properties: {
        since: {
          ...orExpression(duration),
          description:
            'Runs started within this duration back from now (`7d`), or since an ISO timestamp an expression yields. Default: any time.',
        },
        status: { enum: Object.values(STATUSES), description: 'Only runs in this status (`failed`). Default: any.' },
        playbook: { type: 'string', description: 'Only runs of this playbook (its `name`). Default: any.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_LIMIT,
          description: `At most this many runs, the newest. Default ${DEFAULT_LIMIT}.`,
        },
      },
    },
  },
  canWrite: false,
  quiet: true,
  normalise: (tools) => {
    const runs = tools.data.runs as Record<string, unknown>;
    const at = `${tools.at('runs')}/since`;
    return {
      ...(runs.since === undefined ? {} : { since: tools.template(tools.ms(runs.since, at) ?? runs.since, at) }),
      ...(typeof runs.status === 'string' ? { status: runs.status } : {}),
      ...(typeof runs.playbook === 'string' ? { playbook: runs.playbook } : {}),
      limit: typeof runs.limit === 'number' ? runs.limit : DEFAULT_LIMIT,
    };
  },
  async prepare({ step, context }) {
    const query: RunsQuery = {
      ...(step.since === undefined ? {} : { since: await step.since.evaluate(context()) }),
      ...(step.status === undefined ? {} : { status: step.status }),
      ...(step.playbook === undefined ? {} : { playbook: step.playbook }),
      limit: step.limit,
    };
    return { input: query, attempt: (runtime) => executeRuns(query, runtime) };
  },
  outputType: () =>
    closedObject({
      runs: described({ type: 'array', items: RUN_TYPE }, 'The runs found, newest first.'),
      count: described({ type: 'integer' }, 'How many runs were found (at most `limit`).'),
    }),
  examples: [
    {
      description: "List the week's failed runs.",
      yaml: `name: runs-example
steps:
  - id: failed
    runs: { status: failed, since: 7d }
  - log: "\${{ steps.failed.outputs.count }} runs failed this week"
`,
    },
  ],
});
