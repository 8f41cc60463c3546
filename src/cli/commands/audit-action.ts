/** What `fleetbook audit` does (see audit.ts), imported when the command runs. */
import { ExitCode } from '../../errors/index.js';
import { auditPages, verifyAuditChain, withRunStore, type AuditEntry } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { isMachineFormat, outputFormat, writeMachine, type OutputOptions } from '../output.js';
import { table } from './run-log.js';
import { parseInstant } from './runs-action.js';

export async function listAuditAction(
  io: CliIo,
  options: { since?: string; action?: string; actor?: string } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  const filter = {
    ...(options.since === undefined ? {} : { since: parseInstant('since', options.since, new Date()) }),
    ...(options.action === undefined ? {} : { action: options.action }),
    ...(options.actor === undefined ? {} : { actor: options.actor }),
  };
  await withRunStore({ env: io.env }, async (store) => {
    const rows: string[][] = [];
    for await (const entry of auditPages((page) => store.listAudit(page), filter)) {
      if (isMachineFormat(format)) writeMachine(io, format, entry);
      else rows.push(auditRow(entry));
    }
    if (isMachineFormat(format)) return;
    if (rows.length === 0) io.stdout.write('No audit entries.\n');
    else io.stdout.write(table(['SEQ', 'AT', 'ACTOR', 'ROLE', 'ADDRESS', 'ACTION', 'OBJECT', 'OUTCOME'], rows));
  });
}

function auditRow(entry: AuditEntry): string[] {
  const { actor } = entry;
  return [
    String(entry.seq),
    entry.at,
    `${actor.kind === 'token' ? 'token ' : ''}${actor.name}`,
    actor.role ?? '',
    actor.address ?? '',
    entry.action,
    entry.object ? `${entry.object.kind} ${entry.object.id}` : '',
    entry.outcome,
  ];
}

export async function verifyAuditAction(io: CliIo): Promise<void> {
  const verdict = await withRunStore({ env: io.env }, (store) =>
    verifyAuditChain(auditPages((page) => store.listAudit(page))),
  );
  if (verdict.ok) {
    io.stdout.write(`The audit log is intact: ${verdict.count} entries, the last hash ${verdict.lastHash}.\n`);
    return;
  }
  io.stderr.write(`The audit log is broken at entry ${verdict.seq}: ${verdict.reason}.\n`);
  io.exitCode = ExitCode.runFailed;
}
