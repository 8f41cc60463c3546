/**
 * The `-o/--output` option as commands register it: apart from output.ts so registering a
 * command (and `--help`) loads no YAML writer. What the formats mean is in output.ts.
 */
import { Option, type Command } from 'commander';

export const OUTPUT_FORMATS = ['text', 'json', 'yaml', 'wide'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface OutputOptions {
  output?: string;
  json?: boolean;
}

/** Adds `-o/--output` and `--json` to `command`; `extra` lists formats only this command knows (validate's `github`). */
export function addOutputOptions(command: Command, extra: readonly string[] = []): Command {
  return command
    .addOption(new Option('-o, --output <format>', `output format: ${[...OUTPUT_FORMATS, ...extra].join(', ')}`))
    .option('--json', 'shorthand for --output json');
}
