/**
 * `fleetbook validate <file...> [--format stylish|json|github]`: every problem of every
 * file, located; exit 2 when any is an error. Nothing is run and no request is sent.
 */
import type { Command } from 'commander';
import { ExitCode, UsageError } from '../../errors/index.js';
import type { CliIo } from '../io.js';

const FORMATS = ['stylish', 'json', 'github'] as const;
type Format = (typeof FORMATS)[number];

function escapeGithub(text: string, property = false): string {
  const escaped = text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
  return property ? escaped.replaceAll(':', '%3A').replaceAll(',', '%2C') : escaped;
}

export function registerValidateCommand(program: Command, io: CliIo): void {
  program
    .command('validate')
    .description('check playbooks without running them: schema, operations, step references, expressions, schedules')
    .argument('<file...>', 'playbook files')
    .option('--format <format>', `output format: ${FORMATS.join(', ')}`, 'stylish')
    .action(async (files: string[], options: { format: string }) => {
      if (!(FORMATS as readonly string[]).includes(options.format)) {
        throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not '${options.format}'`, 'INVALID_FORMAT');
      }
      // Imported here, not above: `--help` and the other commands do not load the playbook loader.
      const [{ hasErrors, loadPlaybook }, { formatProblems, shownPath }] = await Promise.all([import('../../playbook/index.js'), import('../problems.js')]);
      const format = options.format as Format;
      const problems = files.flatMap((file) => loadPlaybook(file).problems);
      const shown = shownPath;
      if (format === 'json') {
        io.stdout.write(`${JSON.stringify(problems.map((problem) => ({ ...problem, file: shown(problem.file) })), null, 2)}\n`);
      } else if (format === 'github') {
        for (const problem of problems) {
          const level = problem.severity === 'error' ? 'error' : 'warning';
          io.stdout.write(`::${level} file=${escapeGithub(shown(problem.file), true)},line=${problem.line},col=${problem.column},title=${escapeGithub(problem.code, true)}::${escapeGithub(problem.message)}\n`);
        }
      } else if (problems.length > 0) {
        const errors = problems.filter((problem) => problem.severity === 'error').length;
        io.stdout.write(`${formatProblems(problems, shown)}\n\n${errors} error(s), ${problems.length - errors} warning(s) in ${files.length} file(s)\n`);
      } else {
        io.stdout.write(`${files.length} playbook(s) valid\n`);
      }
      if (hasErrors(problems)) io.exitCode = ExitCode.usage;
    });
}
