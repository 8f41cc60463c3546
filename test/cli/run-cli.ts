// The CLI from the TypeScript sources, for tests that need a process of its own (signals):
// `node --import tsx test/cli/run-cli.ts <args>`.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
