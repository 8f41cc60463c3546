/**
 * The `server:` section of `fleetbook.yaml` (beside `profiles:`): settings of `fleetbook server`
 * an operator keeps with the deployment rather than on the command line. Other keys of the
 * section are left to the parts that read them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { UsageError } from '../errors/index.js';
import { CliErrorCode } from './error-codes.js';

export interface ServerSettings {
  /** The web UI's cookies are `Secure` even when the request came over plain HTTP (a TLS proxy in front). */
  secureCookies?: boolean;
}

export function readServerSettings(cwd: string): ServerSettings {
  const file = join(cwd, 'fleetbook.yaml');
  if (!existsSync(file)) return {};
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${file} is not valid YAML: ${(error as Error).message}`, CliErrorCode.invalidConfig);
  }
  const server = (document as { server?: unknown } | null)?.server;
  if (server === undefined || server === null) return {};
  if (typeof server !== 'object' || Array.isArray(server))
    throw new UsageError(
      `${file}: server must be a mapping, got ${JSON.stringify(server)}.`,
      CliErrorCode.invalidConfig,
    );
  const { secureCookies } = server as { secureCookies?: unknown };
  if (secureCookies !== undefined && typeof secureCookies !== 'boolean')
    throw new UsageError(
      `${file}: server.secureCookies must be true or false, got ${JSON.stringify(secureCookies)}.`,
      CliErrorCode.invalidConfig,
    );
  return secureCookies === undefined ? {} : { secureCookies };
}
