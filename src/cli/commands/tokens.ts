/**
 * `fleetbook tokens create|list|revoke`: the API tokens of `fleetbook server`, in the run
 * store. `create` prints the token once (only its hash is kept); `list` never shows one.
 * Its options and help; the work is in tokens-action.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';
import { guardDefaultSubcommand } from '../subcommand-typos.js';

export function registerTokensCommand(program: Command, io: CliIo): void {
  const tokens = program
    .command('tokens')
    .description('API tokens of fleetbook server: create one (shown once), list them, revoke one');
  guardDefaultSubcommand(tokens, { takesOperands: false });

  const create = tokens
    .command('create')
    .description(
      'make a token with a role (viewer reads; operator also starts and resumes runs; admin also manages schedules and tokens)',
    )
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .requiredOption('--name <name>', 'who or what the token is for (unique)')
    .option(
      '--playbooks <patterns>',
      'the role holds only for playbooks whose names match one of these comma-separated patterns (* any text); viewer elsewhere',
    );
  addOutputOptions(create).action(async (options: { role: string; name: string; playbooks?: string } & OutputOptions) =>
    (await import('./tokens-action.js')).createTokenAction(io, options),
  );

  const list = tokens
    .command('list', { isDefault: true })
    .description('every token (never its secret), revoked ones too');
  addOutputOptions(list).action(async (options: OutputOptions) =>
    (await import('./tokens-action.js')).listTokensAction(io, options),
  );

  const revoke = tokens
    .command('revoke')
    .description('revoke a token by its id or name: it and its web sessions stop working at once')
    .argument('<idOrName>', 'the token id or name (see fleetbook tokens list)');
  addOutputOptions(revoke).action(async (idOrName: string, options: OutputOptions) =>
    (await import('./tokens-action.js')).revokeTokenAction(io, idOrName, options),
  );
}
