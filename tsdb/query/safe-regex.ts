/**
 * The engine for user-supplied regular expressions (`regexp(...)` tag filters): RE2's
 * syntax and linear-time matching through re2js (a pure-JS port of RE2/J), so no pattern
 * and no tag value can make a match backtrack for seconds and stall the event loop — V8's
 * own engine takes ~1 s on `(a*)*b` against 24 characters and doubles per character
 * (docs/SECURITY.md, "Regular expressions").
 *
 * Java/OpenTSDB syntax works for ordinary patterns: classes, `\d \w \s \b`, anchors,
 * alternation, groups, lazy and counted repetition, `\p{L}`, inline flags anywhere
 * (`(?i)web`). A leading Java flag group `(?imsu)` becomes compile flags (`u`, Java's
 * UNICODE_CASE, is implied). Not available, rejected with a clear message: backreferences
 * (`\1`), lookaround (`(?=`, `(?<!`), possessive quantifiers (`a*+`), atomic groups,
 * repeat counts over 1000 and patterns longer than MAX_PATTERN_LENGTH.
 */
import { RE2JS } from 're2js';

/** Longest pattern accepted (characters). RE2 bounds the compiled program on top of this. */
export const MAX_PATTERN_LENGTH = 4096;

export interface SafeRegex {
  /** The pattern as given. */
  readonly source: string;
  /** Unanchored search, as Java's Matcher.find(). Linear in value length. */
  test(value: string): boolean;
}

/** A pattern that cannot be used; the message says why. */
export class RegexSyntaxError extends Error {
  override readonly name = 'RegexSyntaxError';
}

const UNSUPPORTED: ReadonlyArray<readonly [RegExp, string]> = [
  [/\\[1-9]/, 'backreferences'],
  [/\(\?<?[=!]/, 'lookaround'],
  [/\(\?>/, 'atomic groups'],
  [/[*+?}]\+/, 'possessive quantifiers'],
];

/** Compiles `pattern`; throws RegexSyntaxError naming what is wrong. */
export function compileSafeRegex(pattern: string): SafeRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new RegexSyntaxError(`pattern too long: ${pattern.length} characters, at most ${MAX_PATTERN_LENGTH}`);
  }
  let source = pattern;
  let flags = 0;
  const inline = /^\(\?([imsu]+)\)/.exec(source);
  if (inline !== null) {
    source = source.slice(inline[0].length);
    for (const f of inline[1]!) {
      if (f === 'i') flags |= RE2JS.CASE_INSENSITIVE;
      else if (f === 'm') flags |= RE2JS.MULTILINE;
      else if (f === 's') flags |= RE2JS.DOTALL;
    }
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, flags);
  } catch (e) {
    const feature = UNSUPPORTED.find(([r]) => r.test(source));
    const why = feature === undefined ? '' : ` (${feature[1]} are not supported: regexp filters use a linear-time engine)`;
    throw new RegexSyntaxError(`${(e as Error).message.replace(/^error parsing regexp: /, '')}${why}`);
  }
  return { source: pattern, test: (value: string) => re.matcher(value).find() };
}
