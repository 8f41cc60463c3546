/**
 * `fleetbook actions [id]`: what a playbook can call. Without an id, every operation by
 * area; with one, its input schema (what `with:` takes) and how it behaves.
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { didYouMean } from '../../errors/did-you-mean.js';
import { inputSchemaOf, loadPlatformDescription, type OperationDescriptor } from '../../openapi/description.js';
import type { CliIo } from '../io.js';

function describeOperation(op: OperationDescriptor): Record<string, unknown> {
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
    input: inputSchemaOf(op),
  };
}

export function registerActionsCommand(program: Command, io: CliIo): void {
  program
    .command('actions')
    .description('list the operations a playbook can call, or show one with its input schema')
    .argument('[id]', 'an operation id, e.g. privateCloud.runSoftwarePrechecks')
    .option('--json', 'print JSON')
    .action((id: string | undefined, options: { json?: boolean }) => {
      const { operations, byId } = loadPlatformDescription();
      if (id !== undefined) {
        const op = byId.get(id);
        if (!op) throw new UsageError(`unknown operation '${id}'.${didYouMean(id, byId.keys())} Run 'fleetbook actions' to list them.`, 'UNKNOWN_OPERATION');
        io.stdout.write(`${JSON.stringify(describeOperation(op), null, 2)}\n`);
        return;
      }
      if (options.json) {
        for (const op of operations) io.stdout.write(`${JSON.stringify({ id: op.id, method: op.method, path: op.path, summary: op.summary })}\n`);
        return;
      }
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
