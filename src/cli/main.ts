/** Entry point of the `fleetbook` command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  process.stdout.write(`fleetbook: ${argv.join(' ')}\n`);
  return 0;
}
