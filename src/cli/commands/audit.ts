/**
 * `fleetbook audit [list]` and `fleetbook audit verify`: the run store's audit log (who did
 * what, when, how it ended), and the check of its hash chain. Its options and help; the work
 * is in audit-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';
import { guardDefaultSubcommand } from '../subcommand-typos.js';

export function registerAuditCommand(program: Command, io: CliIo): void {
  const audit = program
    .command('audit')
    .description('the audit log: list its entries, or verify that none was changed or deleted');
  guardDefaultSubcommand(audit, { takesOperands: false });

  const list = audit
    .command('list', { isDefault: true })
    .description('entries oldest first: who (user or token, role, address), what, on which object, when, outcome')
    .option('--since <when>', 'only entries since: a duration back from now (7d, 12h) or a date')
    .option('--action <action>', 'only this action (login.failed, run.start...)')
    .option('--actor <name>', 'only entries by this user or token name');
  addOutputOptions(list).action(async (options: { since?: string; action?: string; actor?: string } & OutputOptions) =>
    (await import('./audit-action.js')).listAuditAction(io, options),
  );

  audit
    .command('verify')
    .description('check the hash chain: exit 0 when intact, 1 naming the first changed or missing entry')
    .action(async () => (await import('./audit-action.js')).verifyAuditAction(io));
}
