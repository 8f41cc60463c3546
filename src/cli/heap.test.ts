import { describe, expect, it } from 'vitest';
import { limitHeapGrowth, limitWasmCompilerMemory } from './heap.js';

describe('limitHeapGrowth', () => {
  it('sets the growing factor unless the operator chose one in NODE_OPTIONS or node arguments', () => {
    expect(limitHeapGrowth({ NODE_OPTIONS: '--heap-growing-percent=50' }, [])).toBe(false);
    expect(limitHeapGrowth({}, ['--heap_growing_percent=10'])).toBe(false);
    expect(limitHeapGrowth({ NODE_OPTIONS: '--max-old-space-size=512' }, ['--enable-source-maps'])).toBe(true);
  });
});

describe('limitWasmCompilerMemory', () => {
  it('keeps WebAssembly on the baseline compiler unless the operator chose a tier', () => {
    expect(limitWasmCompilerMemory({ NODE_OPTIONS: '--no-liftoff' }, [])).toBe(false);
    expect(limitWasmCompilerMemory({}, ['--wasm_tier_up'])).toBe(false);
    expect(limitWasmCompilerMemory({ NODE_OPTIONS: '--max-old-space-size=512' }, ['--enable-source-maps'])).toBe(true);
  });
});
