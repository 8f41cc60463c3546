/**
 * `fleetbook validate <file|folder...> [-o text|json|yaml|wide|github]`: every problem of every
 * file (a folder: each of its playbooks, checked as the daemon checks them), located; exit 2
 * when any is an error. Nothing is run and no request is sent. `--format stylish|json|github`
 * is the older spelling of `-o`, still taken.
 */
import { Option, type Command } from 'commander';
import { ExitCode } from '../../errors/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { addOutputOptions, type OutputOptions } from '../output-option.js';

const GITHUB = ['github'] as const;
/** `--format` values and the `-o` they mean. */
const LEGACY_FORMATS: Record<string, string> = { stylish: 'text', json: 'json', github: 'github' };

function escapeGithub(text: string, property = false): string {
  const escaped = text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
  return property ? escaped.replaceAll(':', '%3A').replaceAll(',', '%2C') : escaped;
}

export function registerValidateCommand(program: Command, io: CliIo): void {
  const command = program
    .command('validate')
    .description('check playbooks without running them: schema, operations, step references, expressions, schedules')
    .argument('<path...>', 'playbook files, or folders of them (as the daemon reads them)')
    .addOption(
      new Option('--format <format>', 'deprecated: use -o (stylish is -o text)').choices(Object.keys(LEGACY_FORMATS)),
    );
  addOutputOptions(command, GITHUB).action(async (paths: string[], options: OutputOptions & { format?: string }) => {
    // Imported here, not above: `--help` and the other commands do not load the playbook loader.
    const [
      { hasErrors, isPlaybookFile, loadPlaybook, loadPlaybookFolder },
      { formatProblems, shownPath },
      { outputFormat, writeMachine },
      { statSync, readdirSync },
      { emailChannelProblems, loadNotificationConfig, unknownChannelProblems },
      { emailStepUses },
    ] = await Promise.all([
      import('../../playbook/index.js'),
      import('../problems.js'),
      import('../output.js'),
      import('node:fs'),
      import('../../notifications/index.js'),
      import('../email-uses.js'),
    ]);
    // The channels `notify:` rules and `email` steps name are checked against fleetbook.yaml here.
    const notifications = loadNotificationConfig(process.cwd(), io.env, { checkEnv: false });
    const channelProblems = (
      playbook: Parameters<typeof unknownChannelProblems>[0] & Parameters<typeof emailStepUses>[0],
    ) => [
      ...unknownChannelProblems(playbook, notifications),
      ...emailChannelProblems(emailStepUses(playbook), notifications),
    ];
    const loadOptions = playbookLoadOptions(io.env);
    const asked =
      options.output === undefined && options.format !== undefined
        ? { ...options, output: LEGACY_FORMATS[options.format] }
        : options;
    const format = outputFormat(asked, 'text', GITHUB);
    let files = 0;
    const problems = paths.flatMap((path) => {
      if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
        files += readdirSync(path).filter(isPlaybookFile).length;
        const folder = loadPlaybookFolder(path, loadOptions);
        return [...folder.problems, ...folder.playbooks.flatMap(channelProblems)];
      }
      files += 1;
      const loaded = loadPlaybook(path, loadOptions);
      return [...loaded.problems, ...(loaded.playbook ? channelProblems(loaded.playbook) : [])];
    });
    const shown = problems.map((problem) => ({ ...problem, file: shownPath(problem.file) }));
    if (format === 'json') {
      io.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
    } else if (format === 'yaml') {
      writeMachine(io, 'yaml', shown);
    } else if (format === 'github') {
      for (const problem of shown) {
        const level = problem.severity === 'error' ? 'error' : 'warning';
        // A span on one line is underlined exactly; GitHub takes endColumn only on the line it starts.
        const end =
          problem.range !== undefined &&
          problem.range.end.line === problem.line &&
          problem.range.end.column > problem.column
            ? `,endLine=${problem.line},endColumn=${problem.range.end.column}`
            : '';
        io.stdout.write(
          `::${level} file=${escapeGithub(problem.file, true)},line=${problem.line},col=${problem.column}${end},title=${escapeGithub(problem.code, true)}::${escapeGithub(problem.message)}\n`,
        );
      }
    } else if (problems.length > 0) {
      const errors = problems.filter((problem) => problem.severity === 'error').length;
      io.stdout.write(
        `${formatProblems(problems)}\n\n${errors} error(s), ${problems.length - errors} warning(s) in ${files} file(s)\n`,
      );
    } else {
      io.stdout.write(`${files} playbook(s) valid\n`);
    }
    if (hasErrors(problems)) io.exitCode = ExitCode.usage;
  });
}
