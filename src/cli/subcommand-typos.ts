/**
 * A parent command with a default subcommand (`runs` → `list`, `schedules` → `list`) hands any
 * word it does not know to that default: `runs shwo abcd` became "too many arguments for
 * 'list'" and `schedules lst` looked for a file. This check runs before the default takes over
 * and names the subcommand meant instead.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { closestMatches, didYouMean, UsageError } from '../errors/index.js';

/**
 * `takesOperands`: whether the default subcommand takes words of its own (files): then a word
 * counts as a typo only when it is close to a subcommand's name; otherwise any word does.
 */
export function guardDefaultSubcommand(parent: Command, { takesOperands }: { takesOperands: boolean }): void {
  parent.hook('preSubcommand', (thisCommand) => {
    const names = thisCommand.commands.map((command) => command.name());
    const [first] = thisCommand.args;
    // Dispatched by its name, or with no word at all: nothing to check.
    if (first === undefined || first.startsWith('-') || names.includes(first)) return;
    // A file of that name is what the default subcommand takes.
    if (takesOperands && (closestMatches(first, names).length === 0 || existsSync(first))) return;
    throw new UsageError(
      `'${first}' is not a command of 'fleetbook ${thisCommand.name()}' (${names.join(', ')}).${didYouMean(first, names)}`,
      'UNKNOWN_COMMAND',
    );
  });
}
