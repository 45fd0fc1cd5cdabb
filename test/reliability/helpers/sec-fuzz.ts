/**
 * Seeded generators of hostile input for the fuzz tests: random byte strings, mutations
 * of valid text (byte flips, deletions, duplications, splices of nasty tokens), random
 * JSON values. Every test prints its seed; TEST_SEED=<n> replays one.
 */
import { Random } from '../../../core/util/random.js';

export const FUZZ_SEED = process.env.TEST_SEED !== undefined && process.env.TEST_SEED !== '' ? Number(process.env.TEST_SEED) : 7_2026;

/** Tokens that break parsers: separators, numbers at the edges, encodings, control bytes. */
export const NASTY = [
  '', ' ', '  ', '\t', '\0', '\r', '=', '==', '=v', 'k=', '{', '}', '[', ']', '(', ')', ',', '|', '*', '**', ':', '"', '\\',
  '%', '%00', '%2e%2e', '../', 'é', '\u{1F600}', '\uFFFD', '\u202E', '\xff\xfe', '-', '+', '.', '..', '1e400', '-0', 'NaN', 'Infinity',
  '-Infinity', '0x10', '9223372036854775807', '9223372036854775808', '-9223372036854775809', '9007199254740993', '1.5', '1,5',
  '99999999999999', '12345678901234567890', '1704067200.1234', '1704067200.', '.5', 'null', 'true', '__proto__', 'constructor',
  'prototype', 'a'.repeat(300), 'x'.repeat(5000), 'regexp(', 'regexp((a*)*b)', 'wildcard(*)', 'literal_or(a|b)', 'sum:', 'rate{',
  'now-', '1h-ago', '1y-ago', '99999999999d-ago', '1n-ago', '2026/13/45', '2026/01/01-25:61:61',
];

export function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(xs.length)]!;
}

/** A random string of `n` chars drawn from printable ASCII, controls, and a few multibyte ones. */
export function randomText(r: Random, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r.int(10);
    if (k < 6) s += String.fromCharCode(0x20 + r.int(95));
    else if (k < 8) s += String.fromCharCode(r.int(32));
    else if (k < 9) s += pick(r, ['é', 'ß', '中', '\u{1F600}', '\u00a0', '\u2028']);
    else s += pick(r, NASTY);
  }
  return s;
}

/** One to four mutations of `s`: flip, delete, duplicate, insert a nasty token, truncate. */
export function mutate(r: Random, s: string): string {
  let out = s;
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) {
    const at = r.int(out.length + 1);
    switch (r.int(6)) {
      case 0: out = out.slice(0, at) + String.fromCharCode(r.int(256)) + out.slice(at + 1); break;
      case 1: out = out.slice(0, at) + out.slice(at + 1 + r.int(4)); break;
      case 2: out = out.slice(0, at) + out.slice(at, at + 1 + r.int(8)).repeat(2 + r.int(3)) + out.slice(at); break;
      case 3: out = out.slice(0, at) + pick(r, NASTY) + out.slice(at); break;
      case 4: out = out.slice(0, at); break;
      default: out = out.slice(0, at) + ' ' + pick(r, NASTY) + ' ' + out.slice(at); break;
    }
  }
  return out;
}

/** A random JSON value, up to `depth` levels deep. */
export function randomJson(r: Random, depth = 3): unknown {
  const k = r.int(depth > 0 ? 9 : 6);
  switch (k) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return pick(r, [0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, 1704067200, 1704067200123, 17040672001234, -0]);
    case 3: return pick(r, NASTY);
    case 4: return randomText(r, r.int(20));
    case 5: return r.int(1000);
    case 6: return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--) o[pick(r, ['metric', 'timestamp', 'value', 'tags', 'host', '__proto__', 'constructor', randomText(r, 3)])] = randomJson(r, depth - 1);
      return o;
    }
  }
}

export { Random };
