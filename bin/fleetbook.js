#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { limitHeapGrowth, limitWasmCompilerMemory } from '../dist/cli/heap.js';
import { main } from '../dist/cli/main.js';

limitHeapGrowth();
limitWasmCompilerMemory();
process.exitCode = await main(process.argv.slice(2));
