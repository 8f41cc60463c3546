/**
 * A parent command with a default subcommand (`runs` → `list`, `schedules` → `list`) hands any
 * word it does not know to that default: `runs shwo abcd` became "too many arguments for
 * 'list'" and `schedules lst` looked for a file. This check runs before the default takes over
 * and names the subcommand meant instead, wherever the word stands among the default's
 * options (`runs --limit 2 lst` as well as `runs lst`).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { closestMatches, didYouMean, UsageError } from '../errors/index.js';

/**
 * The first word of `args` that is neither an option of `command` nor an option's value
 * (`--limit 2`, `-o json`; `--limit=2` is one word). Stops at `--`: what follows is operands.
 */
export function firstOperand(args: readonly string[], command: Command): string | undefined {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--') return args[index + 1];
    if (!arg.startsWith('-') || arg === '-') return arg;
    if (arg.includes('=')) continue;
    const option = command.options.find((candidate) => candidate.long === arg || candidate.short === arg);
    // A value it requires is the next word; an optional one is taken only when it is not an option.
    if (option?.required || (option?.optional && !args[index + 1]?.startsWith('-'))) index += 1;
  }
  return undefined;
}

/**
 * `takesOperands`: whether the default subcommand takes words of its own (files): then a word
 * counts as a typo only when it is close to a subcommand's name; otherwise any word does.
 */
export function guardDefaultSubcommand(parent: Command, { takesOperands }: { takesOperands: boolean }): void {
  parent.hook('preSubcommand', (thisCommand, dispatched) => {
    const names = thisCommand.commands.map((command) => command.name());
    // Dispatched by its name: nothing to check.
    if (names.includes(thisCommand.args[0] ?? '')) return;
    const word = firstOperand(thisCommand.args, dispatched);
    if (word === undefined) return;
    const usage = `fleetbook ${thisCommand.name()}`;
    // Commander dispatches by the first word only: a subcommand named after options is not one.
    if (names.includes(word))
      throw new UsageError(
        `'${word}' comes first, before its options: \`${usage} ${word} [options]\`.`,
        'UNKNOWN_COMMAND',
      );
    // A file of that name is what the default subcommand takes.
    if (takesOperands && (closestMatches(word, names).length === 0 || existsSync(word))) return;
    throw new UsageError(
      `'${word}' is not a command of '${usage}' (${names.join(', ')}).${didYouMean(word, names)}`,
      'UNKNOWN_COMMAND',
    );
  });
}
