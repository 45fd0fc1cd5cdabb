/**
 * OpenTSDB's time syntax for queries (src/utils/DateTime.java#parseDateTimeString and
 * #parseDuration). Every result is epoch milliseconds.
 *
 * - `<digits>ms` → those milliseconds; `now`; `<duration>-ago` (case-insensitive);
 * - `yyyy/MM/dd`, `yyyy/MM/dd[-| ]HH:mm`, `yyyy/MM/dd[-| ]HH:mm:ss`, chosen by the string's
 *   length (10, 16, 19) and parsed leniently as Java's SimpleDateFormat does (month 13 rolls
 *   into the next year, trailing text is ignored) in the request's timezone;
 * - an integer of 10 characters or fewer is seconds, a longer one milliseconds;
 *   `<10 digits>.<1-3 digits>` is milliseconds with the dot removed and no ×1000, so only
 *   the 3-decimal form is exact (`1355961600.5` is 13559616005 ms, as in OpenTSDB).
 *
 * Durations: `<n><unit>`; only the last character picks the unit (`ms` when it is `s`
 * preceded by a lower-case `m`), lower-cased, so `1M` is a minute; `n` = 30 d, `y` = 365 d.
 * Timezones are IANA names resolved through Intl (tz.ts), no dependency.
 */
import { TsdbError } from '../errors.js';
import { checkTimezone, zonedFieldsToEpochMs } from './tz.js';

const LONG_MAX = 9223372036854775807n;
const LONG_MIN = -9223372036854775808n;

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}

/**
 * OpenTSDB's Tags.parseLong: an optional sign and ASCII digits, within a Java long.
 * Throws an Error whose message is Java's NumberFormatException text.
 */
export function parseJavaLong(s: string): bigint {
  const n = s.length;
  if (n === 0) throw new Error('Empty string');
  let i = 0;
  if (s[0] === '+' || s[0] === '-') {
    if (n === 1) throw new Error(`Just a sign, no value: ${s}`);
    if (n > 20) throw new Error(`Value too long: ${s}`);
    i = 1;
  } else if (n > 19) {
    throw new Error(`Value too long: ${s}`);
  }
  for (let k = i; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) throw new Error(`Invalid character '${s[k]}' in ${s}`);
  }
  const v = BigInt(s);
  if (v > LONG_MAX || v < LONG_MIN) throw new Error(`Overflow in ${s}`);
  return v;
}

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, n: 2_592_000_000, y: 31_536_000_000,
};

/** DateTime.parseDuration: a strictly positive duration in milliseconds. */
export function parseDuration(duration: string): number {
  let unit = 0;
  while (unit < duration.length && isDigit(duration.charCodeAt(unit))) unit++;
  if (unit >= duration.length) throw illegal(`Invalid duration, must have an integer and unit: ${duration}`);
  const digits = duration.slice(0, unit);
  if (digits.length === 0 || digits.length > 19 || BigInt(digits) > LONG_MAX) {
    throw illegal(`Invalid duration (number): ${duration}`);
  }
  const interval = BigInt(digits);
  if (interval <= 0n) throw illegal(`Zero or negative duration: ${duration}`);
  const last = duration.charAt(duration.length - 1).toLowerCase();
  if (last === 's' && duration.charAt(duration.length - 2) === 'm') return Number(interval);
  const mult = UNIT_MS[last];
  if (mult === undefined) throw illegal(`Invalid duration (suffix): ${duration}`);
  const ms = interval * BigInt(mult);
  if (ms > LONG_MAX) throw illegal(`Duration must be < Long.MAX_VALUE ms: ${duration}`);
  return Number(ms);
}

/** The units OpenTSDB's calendar code knows (DateTime#unitsToCalendarType). */
export const DURATION_UNITS = ['ms', 's', 'm', 'h', 'd', 'w', 'n', 'y'] as const;
export type DurationUnit = (typeof DURATION_UNITS)[number];

/**
 * DateTime#getDurationUnits / #getDurationInterval: the count before the unit and the
 * lower-cased unit after it, or undefined when the unit is not one of DURATION_UNITS
 * (parseDuration may still accept such a string, since it only reads the last character).
 */
export function splitDuration(duration: string): { readonly count: number; readonly unit: DurationUnit } | undefined {
  let i = 0;
  while (i < duration.length && isDigit(duration.charCodeAt(i))) i++;
  const unit = duration.slice(i).toLowerCase();
  if (i === 0 || !(DURATION_UNITS as readonly string[]).includes(unit)) return undefined;
  return { count: Number(duration.slice(0, i)), unit: unit as DurationUnit };
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * DateTime.parseDateTimeString: `text` → epoch ms. `nowMs` serves `now` and `-ago`;
 * `timezone` (default UTC) serves the absolute formats and must then be a valid zone.
 */
export function parseDateTime(text: string, nowMs: number, timezone?: string): number {
  if (text.length === 0) throw illegal('Invalid time: ');
  // The common case, epoch seconds or ms: digits only, exact as a double up to 15 of them.
  if (text.length <= 15 && allDigits(text)) return text.length <= 10 ? Number(text) * 1000 : Number(text);
  if (/^[0-9]+ms$/.test(text)) {
    try {
      return Number(parseJavaLong(text.slice(0, -2)));
    } catch (e) {
      throw illegal(`Invalid time: ${text}. ${(e as Error).message}`);
    }
  }
  const lower = text.toLowerCase();
  if (lower === 'now') return nowMs;
  if (lower.endsWith('-ago')) return nowMs - parseDuration(text.slice(0, -4));
  if (text.includes('/') || text.includes(':')) return parseAbsolute(text, timezone);
  let time: bigint;
  try {
    if (text.includes('.')) {
      if (!/^[0-9]{10}\.[0-9]{1,3}$/.test(text)) {
        throw illegal(`Invalid time: ${text}. Millisecond timestamps must be in the format ` +
          '<seconds>.<ms> where the milliseconds are limited to 3 digits');
      }
      time = parseJavaLong(text.replace('.', ''));
    } else {
      time = parseJavaLong(text);
    }
  } catch (e) {
    if (e instanceof TsdbError) throw e;
    throw illegal(`Invalid time: ${text}. ${(e as Error).message}`);
  }
  if (time < 0n) throw illegal(`Invalid time: ${text}. Negative timestamps are not supported.`);
  return text.length <= 10 ? Number(time) * 1000 : Number(time);
}

/** Literal separators of the absolute formats, by length and by whether a '-' appears. */
function formatFor(text: string): string {
  switch (text.length) {
    case 10: return 'yyyy/MM/dd';
    case 16: return text.includes('-') ? 'yyyy/MM/dd-HH:mm' : 'yyyy/MM/dd HH:mm';
    case 19: return text.includes('-') ? 'yyyy/MM/dd-HH:mm:ss' : 'yyyy/MM/dd HH:mm:ss';
    default: throw illegal(`Invalid absolute date: ${text}`);
  }
}

/**
 * A lenient SimpleDateFormat.parse: each numeric field takes the digits there are (spaces
 * before it skipped), each literal must match, text after the last field is ignored, and
 * out-of-range fields roll over (2013/13/01 is 2014/01/01).
 */
function parseAbsolute(text: string, timezone: string | undefined): number {
  const format = formatFor(text);
  const tz = timezone === undefined || timezone === '' ? 'UTC' : timezone;
  checkTimezone(tz);
  const fields: number[] = [];
  let pos = 0;
  let f = 0;
  const unparseable = (): TsdbError => illegal(`Invalid date: ${text}. Unparseable date: "${text}"`);
  while (f < format.length) {
    const ch = format[f]!;
    if (/[a-zA-Z]/.test(ch)) {
      while (f < format.length && format[f] === ch) f++;
      while (text[pos] === ' ' || text[pos] === '\t') pos++;
      const start = pos;
      while (pos < text.length && isDigit(text.charCodeAt(pos))) pos++;
      if (pos === start) throw unparseable();
      fields.push(Number(text.slice(start, pos)));
    } else {
      if (text[pos] !== ch) throw unparseable();
      pos++;
      f++;
    }
  }
  const [year, month, day, hour = 0, minute = 0, second = 0] = fields as [number, number, number, number?, number?, number?];
  return zonedFieldsToEpochMs({ year, month, day, hour, minute, second, millisecond: 0 }, tz);
}

function allDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}
