/**
 * `fleetbook actions [id]`: what a playbook can use. Without an id, the step kinds and every
 * operation by area; with a kind, its fields and examples; with an operation id, its input
 * schema (what `with:` takes) and how it behaves.
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { didYouMean } from '../../errors/did-you-mean.js';
import type { JsonSchema, OperationDescriptor } from '../../openapi/description.js';
import type { StepDefinition } from '../../steps/definitions/step-definition.js';
import type { CliIo } from '../io.js';

function describeOperation(op: OperationDescriptor, input: JsonSchema): Record<string, unknown> {
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    summary: op.summary,
    write: op.isWrite,
    deprecated: op.deprecated,
    ...(op.async ? { async: op.async } : {}),
    ...(op.rateLimit ? { rateLimit: op.rateLimit } : {}),
    ...(op.permission ? { permission: op.permission } : {}),
    input,
  };
}

function describeKind(definition: StepDefinition): Record<string, unknown> {
  return {
    kind: definition.kind,
    description: definition.description,
    canWrite: definition.canWrite,
    fields: definition.fields,
    ...(definition.required?.length ? { required: definition.required } : {}),
    examples: definition.examples,
  };
}

export function registerActionsCommand(program: Command, io: CliIo): void {
  program
    .command('actions')
    .description('list the step kinds and the operations a playbook can call, or show one with its schema')
    .argument('[id]', 'a step kind (forEach) or an operation id (privateCloud.runSoftwarePrechecks)')
    .option('--json', 'print JSON')
    .action(async (id: string | undefined, options: { json?: boolean }) => {
      // Imported here, not above: `--help` and the other commands do not load the description and step kinds.
      const [{ inputSchemaOf, loadPlatformDescription }, { createStepRegistry }] = await Promise.all([import('../../openapi/description.js'), import('../../steps/registry.js')]);
      const { operations, byId } = loadPlatformDescription();
      const kinds = createStepRegistry();
      if (id !== undefined) {
        if (kinds.has(id)) {
          io.stdout.write(`${JSON.stringify(describeKind(kinds.get(id)), null, 2)}\n`);
          return;
        }
        const op = byId.get(id);
        if (!op) throw new UsageError(`unknown step kind or operation '${id}'.${didYouMean(id, [...kinds.kinds, ...byId.keys()])} Run 'fleetbook actions' to list them.`, 'UNKNOWN_OPERATION');
        io.stdout.write(`${JSON.stringify(describeOperation(op, inputSchemaOf(op)), null, 2)}\n`);
        return;
      }
      if (options.json) {
        for (const definition of kinds.list()) io.stdout.write(`${JSON.stringify({ kind: definition.kind, description: definition.description })}\n`);
        for (const op of operations) io.stdout.write(`${JSON.stringify({ id: op.id, method: op.method, path: op.path, summary: op.summary })}\n`);
        return;
      }
      const kindWidth = Math.max(...kinds.kinds.map((kind) => kind.length));
      io.stdout.write('step kinds\n');
      for (const definition of kinds.list()) io.stdout.write(`  ${definition.kind.padEnd(kindWidth)}  ${definition.description.split('\n')[0]}\n`);
      io.stdout.write(`\noperations (a 'call' step runs one by its id)\n`);
      const width = Math.max(...operations.map((op) => op.id.length));
      let area = '';
      for (const op of operations) {
        if (op.area !== area) {
          area = op.area;
          io.stdout.write(`\n${area}\n`);
        }
        const flags = [op.isWrite ? 'write' : 'read', op.async ? 'async' : '', op.deprecated ? 'deprecated' : ''].filter(Boolean).join(', ');
        io.stdout.write(`  ${op.id.padEnd(width)}  ${op.method.padEnd(6)} ${op.summary}${flags ? `  (${flags})` : ''}\n`);
      }
    });
}
