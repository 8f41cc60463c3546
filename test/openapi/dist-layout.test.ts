/**
 * The loader finds platform.yaml from its own location: src/openapi/ under vitest (every other
 * test) and dist/openapi/ after `tsc` builds src into dist. This test compiles the loader into a
 * temporary package laid out like the published one and runs it with plain node.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = mkdtempSync(join(tmpdir(), 'fleetbook-dist-'));

afterAll(() => rmSync(packageDir, { recursive: true, force: true }));

describe('the loader in a built package', () => {
  it('loads schemas/openapi/platform.yaml from dist/openapi/', () => {
    const source = readFileSync(join(ROOT, 'src/openapi/description.ts'), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      // ES2022 output: what NodeNext emits for an ESM package; transpileModule cannot see package.json.
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: 'description.ts',
    });
    mkdirSync(join(packageDir, 'dist/openapi'), { recursive: true });
    writeFileSync(join(packageDir, 'dist/openapi/description.js'), outputText);
    writeFileSync(join(packageDir, 'package.json'), JSON.stringify({ name: 'fleetbook-layout', type: 'module' }));
    cpSync(join(ROOT, 'schemas/openapi/platform.yaml'), join(packageDir, 'schemas/openapi/platform.yaml'));
    symlinkSync(join(ROOT, 'node_modules'), join(packageDir, 'node_modules'), 'dir');

    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { loadPlatformDescription } = await import('./dist/openapi/description.js');" +
          'const d = loadPlatformDescription(); console.log(d.operations.length, d.byId.get("users.inviteUser").successStatus);',
      ],
      { cwd: packageDir, encoding: 'utf8' },
    );
    expect(output.trim()).toBe('55 201');
  });
});
