/**
 * docs/errors.md lists every error code: each layer's `as const` table, and every code
 * written as a literal in the source (`code: 'X'`, `new SomeError(message, 'X')`), which must
 * come from a table.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AdmissionErrorCode } from '../../src/admission/index.js';
import { ApiErrorCode } from '../../src/api/error-codes.js';
import { CliErrorCode } from '../../src/cli/error-codes.js';
import { EngineErrorCode } from '../../src/engine/error-codes.js';
import { CommonErrorCode } from '../../src/errors/index.js';
import { ExpressionErrorCode } from '../../src/expressions/index.js';
import { NotificationErrorCode } from '../../src/notifications/error-codes.js';
import { OpenapiErrorCode } from '../../src/openapi/error-codes.js';
import { ProblemCode } from '../../src/playbook/problem-codes.js';
import { SchedulerErrorCode } from '../../src/scheduler/scheduler-error.js';
import { StepErrorCode } from '../../src/steps/error-codes.js';
import { ServerErrorCode } from '../../src/server/index.js';
import { StoreErrorCode } from '../../src/store/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tables = {
  AdmissionErrorCode,
  ApiErrorCode,
  CliErrorCode,
  CommonErrorCode,
  EngineErrorCode,
  ExpressionErrorCode,
  NotificationErrorCode,
  OpenapiErrorCode,
  ProblemCode,
  SchedulerErrorCode,
  ServerErrorCode,
  StepErrorCode,
  StoreErrorCode,
};
const tabled = new Set(Object.values(tables).flatMap((table) => Object.values(table) as string[]));

/** Codes the doc lists: `| \`CODE\` |` rows. */
function documented(): Set<string> {
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  return new Set([...text.matchAll(/^\|\s*`([A-Z][A-Z0-9_<>a-z]*)`\s*\|/gm)].map((match) => match[1] as string));
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'simulator' || name === 'generated' ? [] : sources(path);
    return /\.ts$/.test(name) && !/\.test(-kit)?\.ts$/.test(name) ? [path] : [];
  });
}

/** Codes written as literals where an error gets its code. */
function literalCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/\bcode: '([A-Z][A-Z0-9_]+)'/g, /(?:Error|super)\([^;]*?,\s*'([A-Z][A-Z0-9_]{2,})'\s*[,)]/gs];
  for (const file of sources(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns)
      for (const match of text.matchAll(pattern)) found.set(match[1] as string, relative(root, file));
  }
  return found;
}

describe('docs/errors.md', () => {
  it("lists every code of every layer's table", () => {
    const listed = documented();
    expect([...tabled].filter((code) => !listed.has(code)).sort()).toEqual([]);
  });

  it('lists nothing that is no code', () => {
    const listed = documented();
    const patterns = ['HTTP_<status>', 'YAML_<code>'];
    expect([...listed].filter((code) => !tabled.has(code) && !patterns.includes(code)).sort()).toEqual([]);
  });

  it('every code written as a literal in the source is in a table', () => {
    // Codes of libraries we read (SQLite's), not codes of ours.
    const untabled = [...literalCodes()]
      .filter(([code]) => !tabled.has(code) && !code.startsWith('SQLITE_'))
      .map(([code, file]) => `${code} (${file})`);
    expect(untabled).toEqual([]);
  });
});
