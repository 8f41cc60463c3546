import { closedObject, described } from './value-types.js';
import { orExpression } from './schema-parts.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeFile, fileNameProblem } from '../executors/file.js';
import { defineLeaf, type NormaliseTools } from './step-definition.js';

export interface FileStep extends StepBase {
  kind: 'file';
  /** A bare file name in the run's outputs folder (`name` is the step's label). */
  fileName: Template;
  /** A list of flat objects. */
  csv: Template;
  columns?: string[];
}

function normaliseFile(tools: NormaliseTools): Record<string, unknown> {
  const file = tools.data.file as Record<string, unknown>;
  const at = (field: string): string => `${tools.at('file')}/${field}`;
  // A literal name is checked as the playbook loads; a computed one when the step runs.
  if (typeof file.name === 'string' && !file.name.includes('${{')) {
    const problem = fileNameProblem(file.name);
    if (problem) tools.problem(at('name'), 'INVALID_FILE', `file name: ${problem}`);
  }
  return {
    fileName: tools.template(file.name, at('name')),
    csv: tools.template(file.csv, at('csv')),
    ...(Array.isArray(file.columns) ? { columns: file.columns } : {}),
  };
}

export const fileStep = defineLeaf<FileStep>({
  kind: 'file',
  description:
    "Writes a list of flat objects as a CSV file into the run's outputs folder (`run.outputsDir`), to attach to an `email` or download from the run's page. Outputs: path, filename, bytes, rows, contentType.",
  fields: {
    file: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'csv'],
      properties: {
        name: {
          type: 'string',
          description:
            "The file's name in the run's outputs folder (`failed-runs.csv`): letters, digits, `_`, `-`, `.`; no folder. May hold `${{ }}`.",
        },
        csv: {
          ...orExpression({ type: 'array', items: { type: 'object' } }),
          description:
            'The rows: a list of flat objects (an expression yielding one). The header is their keys in the order they first appear; a nested value is written as JSON, a missing one empty.',
        },
        columns: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          uniqueItems: true,
          description: 'The header, in this order (other keys are left out): the header is written even without rows.',
        },
      },
    },
  },
  // Its only effect is a file in the run's own folder: a dry run and a rehearsal write it too.
  canWrite: false,
  quiet: true,
  normalise: normaliseFile,
  async prepare({ step, context }) {
    const values = context();
    const name = await step.fileName.evaluate(values);
    const csv = await step.csv.evaluate(values);
    const where = `${step.location.file}:${step.location.line}`;
    return {
      input: { name, ...(step.columns ? { columns: step.columns } : {}) },
      attempt: (runtime) =>
        executeFile({ name, csv, ...(step.columns ? { columns: step.columns } : {}), where }, runtime),
    };
  },
  outputType: () =>
    closedObject({
      path: described({ type: 'string' }, 'Where the file is: `<run.outputsDir>/<name>` (for `email` `attach`).'),
      filename: { type: 'string' },
      bytes: { type: 'integer' },
      rows: described({ type: 'integer' }, 'Rows written, the header aside.'),
      contentType: { type: 'string' },
    }),
  examples: [
    {
      description: "Write a table as a CSV file of the run's outputs folder.",
      yaml: `name: file-example
steps:
  - id: rows
    set:
      rows:
        - { region: us-west, systems: 3 }
        - { region: eu-central, systems: 12 }
  - id: csv
    file:
      name: systems.csv
      csv: \${{ steps.rows.outputs.rows }}
  - log: "wrote \${{ steps.csv.outputs.rows }} rows to \${{ steps.csv.outputs.path }}"
`,
    },
  ],
});
