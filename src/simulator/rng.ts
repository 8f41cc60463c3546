import type { Rng } from './context.js';

/** 32-bit FNV-1a of a string: turns a fork label into seed material. */
function hashLabel(label: string, basis: number): number {
  let hash = (0x811c9dc5 ^ basis) >>> 0;
  for (let i = 0; i < label.length; i += 1) {
    hash ^= label.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A seeded generator (sfc32: small, fast, and good enough statistically for a simulated
 * world). The same `seed` always gives the same sequence; `fork(label)` gives a child
 * that depends only on the seed and the label, so one part of the world can draw numbers
 * without shifting the sequence of another.
 */
export function createRng(seed: number | string): Rng {
  const seedWord = typeof seed === 'number' ? seed >>> 0 : hashLabel(seed, 0);
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seedWord;

  function nextWord(): number {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  }
  // Warm-up: the first outputs of sfc32 still resemble the seed.
  for (let i = 0; i < 15; i += 1) nextWord();

  const rng: Rng = {
    next: () => nextWord() / 0x1_0000_0000,
    int(minInclusive, maxInclusive) {
      return minInclusive + Math.floor(rng.next() * (maxInclusive - minInclusive + 1));
    },
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('pick() needs at least one item');
      return items[Math.floor(rng.next() * items.length)] as T;
    },
    uuid() {
      let text = '';
      for (let word = 0; word < 4; word += 1) {
        let value = nextWord();
        for (let byte = 0; byte < 4; byte += 1) {
          const index = word * 4 + byte;
          let octet = value & 0xff;
          value >>>= 8;
          // Version 4 and the RFC 4122 variant, as a random uuid would carry.
          if (index === 6) octet = (octet & 0x0f) | 0x40;
          if (index === 8) octet = (octet & 0x3f) | 0x80;
          if (index === 4 || index === 6 || index === 8 || index === 10) text += '-';
          text += HEX[octet];
        }
      }
      return text;
    },
    fork: (label) => createRng(hashLabel(label, seedWord)),
  };
  return rng;
}
