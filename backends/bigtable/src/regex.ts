/**
 * Regular expressions sent to Bigtable. Bigtable evaluates RE2 over raw bytes (Latin-1:
 * one character per byte, as the emulator's binaryregexp and OpenTSDB's AsyncBigtable
 * assume), so a pattern travels as the Latin-1 bytes of an ASCII-only RE2 pattern:
 * anything above 0x7f is written `\xHH`.
 *
 * `re2OfKeyRegex` translates the Store's keyRegex (JavaScript syntax inside the subset
 * validate.ts admits) into RE2 that matches the same keys:
 * - `\uHHHH` and literal characters up to U+00FF become `\xHH`; above U+00FF no key byte
 *   can match, which is rejected rather than guessed;
 * - `\s`/`\S` become explicit classes (JS's \s also matches \v and U+00A0 in Latin-1,
 *   RE2's does not);
 * - `(?<name>` becomes `(?P<name>`; `\0` becomes `\x00`;
 * - the whole is wrapped as `(?s)^(?:…)$` (full match, `.` matches every byte).
 */
import { StoreError } from '../../../core/api/errors.js';
import type { FuzzyRule } from '../../../core/api/store.js';

const JS_SPACE = '\\t\\n\\x0b\\f\\r \\xa0';

/** `\xHH` for one byte. */
export function escapeByte(b: number): string {
  return `\\x${b.toString(16).padStart(2, '0')}`;
}

/** A pattern matching exactly these bytes. */
export function escapeBytes(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += escapeByte(b);
  return s;
}

/** The bytes Bigtable receives for an ASCII RE2 pattern. */
export function patternBytes(pattern: string): Buffer {
  return Buffer.from(pattern, 'latin1');
}

/** Full-match wrapper with `.` matching every byte. */
export function anchored(pattern: string): string {
  return `(?s)^(?:${pattern})$`;
}

function invalid(pattern: string, why: string): StoreError {
  return new StoreError('STORE_INVALID_ARGUMENT', `invalid keyRegex ${JSON.stringify(pattern.slice(0, 200))}: ${why}`);
}

/** Translates a validated JavaScript key pattern into RE2 (see the file header). */
export function re2OfKeyRegex(js: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < js.length; i++) {
    const c = js[i]!;
    const code = c.charCodeAt(0);
    if (c === '\\') {
      const n = js[i + 1] ?? '';
      i++;
      if (n === 'u') {
        const hex = js.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw invalid(js, 'malformed \\u escape');
        const cp = parseInt(hex, 16);
        if (cp > 0xff) throw invalid(js, `\\u${hex} can never match a key byte`);
        out += escapeByte(cp);
        i += 4;
      } else if (n === 's') {
        out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      } else if (n === 'S') {
        if (inClass) throw invalid(js, '\\S inside a character class is not supported');
        out += `[^${JS_SPACE}]`;
      } else if (n === '0' && !/[0-9]/.test(js[i + 1] ?? '')) {
        out += '\\x00';
      } else if (n === 'c' || n === 'k' || n === 'p' || n === 'P') {
        throw invalid(js, `\\${n} escapes are not in the RE2 subset`);
      } else if (n.charCodeAt(0) > 0x7f) {
        if (n.charCodeAt(0) > 0xff) throw invalid(js, `U+${n.charCodeAt(0).toString(16)} can never match a key byte`);
        out += escapeByte(n.charCodeAt(0));
      } else {
        out += `\\${n}`;
      }
    } else if (code > 0x7f) {
      if (code > 0xff) throw invalid(js, `U+${code.toString(16)} can never match a key byte`);
      out += escapeByte(code);
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      if (js[i + 1] === '^') out += js[++i];
      if (js[i + 1] === ']') throw invalid(js, 'an empty character class is not in the RE2 subset');
    } else if (c === '(' && js.startsWith('(?<', i) && js[i + 3] !== '=' && js[i + 3] !== '!') {
      out += '(?P<';
      i += 2;
    } else {
      out += c;
    }
  }
  return anchored(out);
}

/** One rule: fixed bytes where mask = 1, any byte elsewhere, then anything. */
export function re2OfFuzzyRules(rules: readonly FuzzyRule[]): string {
  const alts = rules.map((r) => {
    let s = '';
    for (let i = 0; i < r.template.length; i++) s += r.mask[i] === 0 ? '.' : escapeByte(r.template[i]!);
    return `${s}.*`;
  });
  return anchored(alts.join('|'));
}

export function re2OfPrefix(prefix: Uint8Array): string {
  return anchored(`${escapeBytes(prefix)}.*`);
}

/** Exactly these bytes (qualifiers, values). */
export function re2OfExact(bytes: Uint8Array): string {
  return anchored(escapeBytes(bytes));
}

/**
 * Every byte string NOT in `set` (full match). Built on the trie of the set: at each node
 * a string leaves the set by ending early (node not terminal), by taking a byte no child
 * has, or, below a child, by leaving the child's subset.
 */
export function re2OfComplement(set: readonly Uint8Array[]): string {
  interface Node { terminal: boolean; children: Map<number, Node> }
  const root: Node = { terminal: false, children: new Map() };
  for (const s of set) {
    let n = root;
    for (const b of s) {
      let c = n.children.get(b);
      if (c === undefined) {
        c = { terminal: false, children: new Map() };
        n.children.set(b, c);
      }
      n = c;
    }
    n.terminal = true;
  }
  const outside = (n: Node): string => {
    const alts: string[] = [];
    if (!n.terminal) alts.push('');
    const bytes = [...n.children.keys()].sort((a, b) => a - b);
    alts.push(bytes.length === 0 ? '.+' : `[^${bytes.map(escapeByte).join('')}].*`);
    for (const b of bytes) alts.push(`${escapeByte(b)}${outside(n.children.get(b)!)}`);
    return `(?:${alts.join('|')})`;
  };
  return anchored(outside(root));
}
