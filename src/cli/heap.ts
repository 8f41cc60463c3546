/**
 * How the `fleetbook` process's heap grows. Between two major collections V8 lets the old
 * generation grow by a factor it picks for throughput, up to 4× the data that survived the
 * last one. A run following thousands of async operations makes a steady stream of
 * short-lived objects (every poll) that outlive a young-generation collection, so with that
 * factor the heap reaches about 3× the live data before it is collected: 5,000 concurrent
 * waits peaked at 390–440 MB RSS with about 100 MB live. A factor of 1.3 keeps the same run
 * near 250 MB at no measurable cost in time (bench/README.md, benchmark 5).
 */
import { setFlagsFromString } from 'node:v8';

const GROWING_FLAG = 'heap-growing-percent';
const GROWING_PERCENT = 30;

/**
 * Sets the heap growing factor, unless the operator chose one (`NODE_OPTIONS` or node's own
 * arguments). V8 reads it at every major collection, so setting it at start-up takes effect.
 * Returns whether it was set.
 */
export function limitHeapGrowth(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): boolean {
  const chosen = [...execArgv, env.NODE_OPTIONS ?? ''].some((argument) =>
    argument.replaceAll('_', '-').includes(GROWING_FLAG),
  );
  if (!chosen) setFlagsFromString(`--${GROWING_FLAG}=${GROWING_PERCENT}`);
  return !chosen;
}

const WASM_FLAGS = ['liftoff', 'wasm-tier-up', 'wasm-dynamic-tiering'];

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff), unless the operator chose a
 * WebAssembly tier. The HTTP client parses responses with llhttp compiled to WebAssembly; once
 * a large download makes it hot, V8 re-compiles it with its optimising compiler, a transient
 * ~20–30 MB of native memory that was the peak RSS of a 504 MB download (bench 6: 147–162 MB
 * with it, 118–133 MB without, at the same MB/s). Must run before the first request compiles
 * the module. Returns whether it was set.
 */
export function limitWasmCompilerMemory(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): boolean {
  const chosen = [...execArgv, env.NODE_OPTIONS ?? ''].some((argument) =>
    WASM_FLAGS.some((flag) => argument.replaceAll('_', '-').includes(flag)),
  );
  if (!chosen) setFlagsFromString('--liftoff-only');
  return !chosen;
}
