/**
 * The one output switch every command takes: `-o/--output text|json|yaml|wide`, with `--json`
 * kept as its shorthand. `text` is the human view and `wide` the same with more columns; both
 * are available whether or not standard output is a terminal (piped, under cron or systemd).
 * Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
 */
import { stringify } from 'yaml';
import { UsageError, didYouMean } from '../errors/index.js';
import type { CliIo } from './io.js';
import { OUTPUT_FORMATS, type OutputFormat, type OutputOptions } from './output-option.js';

export { OUTPUT_FORMATS, type OutputFormat, type OutputOptions };

/**
 * The format asked for. `fallback` is what a command shows when none is asked: most show
 * text; a run's log shows JSON lines when standard output is not a terminal (a log collector reads it).
 */
export function outputFormat<Extra extends string = never>(
  options: OutputOptions,
  fallback: OutputFormat | Extra = 'text',
  extra: readonly Extra[] = [],
): OutputFormat | Extra {
  if (options.output !== undefined) {
    const known: string[] = [...OUTPUT_FORMATS, ...extra];
    if (!known.includes(options.output)) {
      throw new UsageError(
        `--output must be one of ${known.join(', ')}, got '${options.output}'.${didYouMean(options.output, known)}`,
        'INVALID_OPTION',
      );
    }
    if (options.json === true && options.output !== 'json')
      throw new UsageError(`--json and --output ${options.output} ask for two formats: give one`, 'INVALID_OPTION');
    return options.output as OutputFormat | Extra;
  }
  return options.json === true ? 'json' : fallback;
}

/** Whether a human view is the machine's one: JSON or YAML. */
export const isMachineFormat = (format: string): format is 'json' | 'yaml' => format === 'json' || format === 'yaml';

/** One value as the format asks: a JSON line, or a YAML document (`---` between several). */
export function writeMachine(io: CliIo, format: 'json' | 'yaml', value: unknown): void {
  io.stdout.write(format === 'json' ? `${JSON.stringify(value)}\n` : `---\n${stringify(value)}`);
}

/** Whether to colour what goes to standard output: a terminal, and NO_COLOR unset or empty. */
export function useColour(io: CliIo): boolean {
  return io.stdout.isTTY === true && (io.env.NO_COLOR ?? '') === '' && io.env.TERM !== 'dumb';
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;
export type Colour = keyof typeof CODES;

/** A painter: `paint('red', text)` with colour on, the text alone without. */
export function painter(io: CliIo): (colour: Colour, text: string) => string {
  return useColour(io) ? (colour, text) => `\u001b[${CODES[colour]}m${text}\u001b[0m` : (_colour, text) => text;
}

/** The colour of a run's or step's status. */
export function statusColour(status: string): Colour | undefined {
  if (status === 'succeeded') return 'green';
  if (status === 'failed' || status === 'crashed') return 'red';
  if (status === 'interrupted' || status.startsWith('running (')) return 'yellow';
  return undefined;
}
