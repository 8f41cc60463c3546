/**
 * `fleetbook actions [id]`: what a playbook can use. Without an id, the step kinds and every
 * operation by area; with a kind, its fields and examples; with an operation id, its input
 * schema (what `with:` takes), how it behaves and the shape of its answer. Readable text on a
 * terminal and with `-o text`; JSON (`-o json`, the default off a terminal) or YAML.
 */
import type { Command } from 'commander';
import { UsageError, didYouMean } from '../../errors/index.js';
import type { JsonSchema, OperationDescriptor } from '../../openapi/index.js';
import type { StepDefinition } from '../../steps/index.js';
import type { CliIo } from '../io.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';

function describeOperation(op: OperationDescriptor, input: JsonSchema, outputs: JsonSchema): Record<string, unknown> {
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
    response: { status: op.successStatus, ...op.responses[String(op.successStatus)] },
    outputs,
  };
}

function describeKind(definition: StepDefinition, outputs: JsonSchema): Record<string, unknown> {
  return {
    kind: definition.kind,
    description: definition.description,
    canWrite: definition.canWrite,
    fields: definition.fields,
    ...(definition.required?.length ? { required: definition.required } : {}),
    outputs,
    examples: definition.examples,
  };
}

export function registerActionsCommand(program: Command, io: CliIo): void {
  const command = program
    .command('actions')
    .description(
      "list the step kinds and the operations a playbook can call, or show one: its input, its answer's shape, examples",
    )
    .argument('[id]', 'a step kind (forEach) or an operation id (privateCloud.runSoftwarePrechecks)');
  addOutputOptions(command).action(async (id: string | undefined, options: OutputOptions) => {
    // Imported here, not above: `--help` and the other commands do not load the description and step kinds.
    const [
      { inputSchemaOf, loadPlatformDescription },
      { callAnswerType, createStepRegistry, kindOutputType },
      { isMachineFormat, outputFormat, writeMachine },
      view,
    ] = await Promise.all([
      import('../../openapi/index.js'),
      import('../../steps/index.js'),
      import('../output.js'),
      import('./actions-view.js'),
    ]);
    const description = loadPlatformDescription();
    const { operations, byId } = description;
    const kinds = createStepRegistry();
    if (id !== undefined) {
      // One item's JSON was what scripts read off a terminal: still the default there.
      const format = outputFormat(options, io.stdout.isTTY === true ? 'text' : 'json');
      const machine = (value: unknown): void => {
        if (format === 'json') io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        else writeMachine(io, 'yaml', value);
      };
      if (kinds.has(id)) {
        const definition = kinds.get(id);
        const outputs = kindOutputType(definition, description);
        if (isMachineFormat(format)) machine(describeKind(definition, outputs));
        else io.stdout.write(view.formatKind(definition, outputs));
        return;
      }
      const op = byId.get(id);
      if (!op)
        throw new UsageError(
          `unknown step kind or operation '${id}'.${didYouMean(id, [...kinds.kinds, ...byId.keys()])} Run 'fleetbook actions' to list them.`,
          'UNKNOWN_OPERATION',
        );
      // What a call step of it reads: with `wait` on an async operation, the operation's record too.
      const outputs = callAnswerType(op, description, { wait: op.async !== undefined, paginate: false, saveTo: false });
      if (isMachineFormat(format)) machine(describeOperation(op, inputSchemaOf(op), outputs));
      else io.stdout.write(view.formatOperation(op, inputSchemaOf(op), outputs));
      return;
    }
    const format = outputFormat(options);
    if (isMachineFormat(format)) {
      for (const definition of kinds.list())
        writeMachine(io, format, { kind: definition.kind, description: definition.description });
      for (const op of operations)
        writeMachine(io, format, { id: op.id, method: op.method, path: op.path, summary: op.summary });
      return;
    }
    const kindWidth = Math.max(...kinds.kinds.map((kind) => kind.length));
    io.stdout.write('step kinds\n');
    for (const definition of kinds.list())
      io.stdout.write(`  ${definition.kind.padEnd(kindWidth)}  ${definition.description.split('\n')[0]}\n`);
    io.stdout.write(`\noperations (a 'call' step runs one by its id)\n`);
    const width = Math.max(...operations.map((op) => op.id.length));
    let area = '';
    for (const op of operations) {
      if (op.area !== area) {
        area = op.area;
        io.stdout.write(`\n${area}\n`);
      }
      const flags = [op.isWrite ? 'write' : 'read', op.async ? 'async' : '', op.deprecated ? 'deprecated' : '']
        .filter(Boolean)
        .join(', ');
      io.stdout.write(`  ${op.id.padEnd(width)}  ${op.method.padEnd(6)} ${op.summary}${flags ? `  (${flags})` : ''}\n`);
    }
  });
}
