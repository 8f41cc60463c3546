/** A few lines of `text` around `line`, with a caret under `column`, for terminal messages. */
export function codeFrame(text: string, line: number, column: number, context = 2): string {
  const lines = text.split(/\r?\n/);
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + 1);
  const width = String(last).length;
  const out: string[] = [];
  for (let number = first; number <= last; number += 1) {
    const marker = number === line ? '>' : ' ';
    out.push(`${marker} ${String(number).padStart(width)} | ${lines[number - 1] ?? ''}`.trimEnd());
    if (number === line) out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1))}^`);
  }
  return out.join('\n');
}
