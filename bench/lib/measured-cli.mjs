// `fleetbook <args>` as bin/fleetbook.js runs it (compiled CLI, heap growth limited), writing
// its peak RSS in bytes to the file named by BENCH_RSS_FILE as it exits: benchmark 15 takes
// the memory of `runs show -o json` this way.
import { writeFileSync } from 'node:fs';
import { limitHeapGrowth, limitWasmCompilerMemory } from '../../dist/cli/heap.js';
import { main } from '../../dist/cli/main.js';

limitHeapGrowth();
limitWasmCompilerMemory();
process.exitCode = await main(process.argv.slice(2));
process.once('exit', () => writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS * 1024)));
