/** What `fleetbook tokens` does (see tokens.ts), imported when the command runs. */
import { UsageError } from '../../errors/index.js';
import { CliErrorCode } from '../error-codes.js';
import { describeRole, issueApiToken, parsePlaybookPatterns, parseTokenRole } from '../../server/index.js';
import { AuditAction, withRunStore, type AuditActor } from '../../store/index.js';
import { userInfo } from 'node:os';
import type { CliIo } from '../io.js';
import { isMachineFormat, outputFormat, writeMachine, type OutputOptions } from '../output.js';
import { table } from './run-log.js';

export async function createTokenAction(
  io: CliIo,
  options: { role: string; name: string; playbooks?: string } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  const role = parseTokenRole(options.role);
  const playbooks = options.playbooks === undefined ? undefined : parsePlaybookPatterns(options.playbooks);
  if (playbooks && role === 'viewer')
    throw new UsageError('--playbooks limits a role above viewer (a viewer reads every playbook).', 'INVALID_OPTION');
  const { token, secret } = await withRunStore({ env: io.env }, async (store) => {
    const issued = await issueApiToken(store, { name: options.name, role, ...(playbooks ? { playbooks } : {}) });
    await store.appendAudit({
      actor: cliActor(io),
      action: AuditAction.tokenCreate,
      object: { kind: 'token', id: issued.token.id },
      outcome: 'ok',
      detail: { name: issued.token.name, role: issued.token.role, ...(playbooks ? { playbooks } : {}) },
    });
    return issued;
  });
  if (isMachineFormat(format)) {
    writeMachine(io, format, { ...token, token: secret });
    return;
  }
  io.stdout.write(
    `Token ${token.id} for ${token.name} (${describeRole(token)}); it is shown this once, keep it now:\n\n  ${secret}\n\n` +
      `Use it as "Authorization: Bearer <token>", FLEETBOOK_TOKEN, or on the server's login page.\n`,
  );
}

export async function listTokensAction(io: CliIo, options: OutputOptions): Promise<void> {
  const format = outputFormat(options);
  const tokens = await withRunStore({ env: io.env }, (store) => store.listApiTokens());
  if (isMachineFormat(format)) {
    for (const token of tokens) writeMachine(io, format, token);
    return;
  }
  if (tokens.length === 0) {
    io.stdout.write('No tokens. Make one: fleetbook tokens create --role viewer --name <who>\n');
    return;
  }
  io.stdout.write(
    table(
      ['ID', 'NAME', 'ROLE', 'CREATED', 'REVOKED'],
      tokens.map((token) => [token.id, token.name, describeRole(token), token.createdAt, token.revokedAt ?? '']),
    ),
  );
}

export async function revokeTokenAction(io: CliIo, idOrName: string, options: OutputOptions): Promise<void> {
  const format = outputFormat(options);
  const token = await withRunStore({ env: io.env }, async (store) => {
    const revoked = await store.revokeApiToken(idOrName);
    if (revoked)
      await store.appendAudit({
        actor: cliActor(io),
        action: AuditAction.tokenRevoke,
        object: { kind: 'token', id: revoked.id },
        outcome: 'ok',
        detail: { name: revoked.name },
      });
    return revoked;
  });
  if (!token)
    throw new UsageError(
      `No token with the id or name '${idOrName}' (see fleetbook tokens list).`,
      CliErrorCode.unknownToken,
    );
  if (isMachineFormat(format)) writeMachine(io, format, token);
  else io.stdout.write(`Token ${token.id} (${token.name}) revoked at ${token.revokedAt ?? ''}.\n`);
}

/** Who runs the CLI on this machine: it reaches the store directly, with the account's rights, not a token's. */
export function cliActor(io: CliIo): AuditActor {
  return { kind: 'user', name: io.env.USER ?? userInfo().username, address: 'local' };
}
