/**
 * /api/query's JSON exactly as OpenTSDB's serializer writes it (HttpJsonSerializer
 * #formatQueryAsyncV1): an array of `{metric, tags, aggregateTags, [query], [tsuids],
 * [annotations], [globalAnnotations], dps, [stats]}`, `dps` an object `{"<ts>": v}` or,
 * with `arrays`, `[[ts, v], …]`; integers printed as integers, doubles as Java prints
 * them (2.0, 1.0E7), NaN as the string "NaN" (or null under the null fill policy).
 * Written as UTF-8 bytes into one growing buffer, without an object per point.
 */

import { writePlainDouble } from './format-double.js';

const COMMA = 44;
const QUOTE = 34;
const COLON = 58;
const OPEN_BRACKET = 91;
const MINUS = 45;
const ZERO = 48;

/** Bytes writePlainDouble may write: a sign, "0.00", 17 digits. */
const MAX_PLAIN_DOUBLE_BYTES = 24;

/** The points of one output series: ms timestamps and values, with per-point kinds. */
export interface OutputPoints {
  readonly count: number;
  readonly ts: Float64Array;
  readonly values: Float64Array;
  /** 1 where the value is an integer (printed without a fraction). */
  readonly isInt: Uint8Array;
  /** When set, NaN values print as null (the `null` fill policy) instead of "NaN". */
  readonly nanAsNull?: boolean;
}

export interface OutputSeries {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly aggregateTags: readonly string[];
  readonly points: OutputPoints;
  /** showQuery: the sub-query echo, with `index`. */
  readonly query?: unknown;
  readonly tsuids?: readonly string[];
  readonly annotations?: readonly unknown[];
  readonly globalAnnotations?: readonly unknown[];
  readonly stats?: unknown;
}

export interface FormatOptions {
  readonly arrays: boolean;
  readonly msResolution: boolean;
}

/** The whole /api/query answer as UTF-8 bytes (what the route sends). */
export function formatQueryResultsBytes(series: readonly OutputSeries[], opts: FormatOptions, summary?: unknown): Buffer {
  const w = new JsonBytes(estimateBytes(series));
  w.ascii('[');
  writeSeriesList(w, series, opts);
  if (summary !== undefined) {
    if (series.length > 0) w.ascii(',');
    w.text(summaryJson(summary));
  }
  w.ascii(']');
  return w.done();
}

/**
 * The series of an answer without the brackets around them, separated by commas: a part of
 * the answer another thread formats (format-parallel.ts); the parts joined by commas inside
 * brackets are byte for byte formatQueryResultsBytes' answer.
 */
export function formatSeriesListBytes(series: readonly OutputSeries[], opts: FormatOptions): Buffer {
  const w = new JsonBytes(estimateBytes(series));
  writeSeriesList(w, series, opts);
  return w.done();
}

/** The element that ends an answer with `showSummary`. */
export function summaryJson(summary: unknown): string {
  return JSON.stringify({ statsSummary: summary });
}

function writeSeriesList(w: JsonBytes, series: readonly OutputSeries[], opts: FormatOptions): void {
  const keys = new DpsKeys();
  for (let i = 0; i < series.length; i++) {
    if (i > 0) w.ascii(',');
    writeSeries(w, series[i]!, opts, keys);
  }
}

function writeSeries(w: JsonBytes, s: OutputSeries, opts: FormatOptions, keys: DpsKeys): void {
  let head = `{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(s.tags)},"aggregateTags":${JSON.stringify(s.aggregateTags)}`;
  if (s.query !== undefined) head += `,"query":${JSON.stringify(s.query)}`;
  if (s.tsuids !== undefined) head += `,"tsuids":${JSON.stringify(s.tsuids)}`;
  if (s.annotations !== undefined && s.annotations.length > 0) head += `,"annotations":${JSON.stringify(s.annotations)}`;
  if (s.globalAnnotations !== undefined && s.globalAnnotations.length > 0) head += `,"globalAnnotations":${JSON.stringify(s.globalAnnotations)}`;
  w.text(`${head},"dps":`);
  writeDps(w, s.points, opts, keys);
  if (s.stats !== undefined) w.text(`,"stats":${JSON.stringify(s.stats)}`);
  w.ascii('}');
}

/** `dps` as an object (keys in time order) or as [[ts, v], …] pairs. */
function writeDps(w: JsonBytes, p: OutputPoints, opts: FormatOptions, keys: DpsKeys): void {
  w.ascii(opts.arrays ? '[' : '{');
  const nanAsNull = p.nanAsNull === true;
  for (let i = 0; i < p.count; i++) {
    keys.write(w, i, p.ts[i]!, opts);
    w.value(p.values[i]!, p.isInt[i] === 1, nanAsNull);
    if (opts.arrays) w.ascii(']');
  }
  w.ascii(opts.arrays ? ']' : '}');
}

/**
 * The text before each point's value (`,"<ts>":` or `,[<ts>,`), by position. Output series
 * of one query mostly share their timestamps (downsampled buckets), so the text of the
 * previous series at the same position is copied from where it was written in the output
 * when the timestamp is the same.
 */
class DpsKeys {
  private ts: number[] = [];
  /** Where position i's text was last written in the output, and its length. */
  private at: number[] = [];
  private len: number[] = [];
  private arrays = false;
  private ms = false;

  write(w: JsonBytes, i: number, tsMs: number, opts: FormatOptions): void {
    if (opts.arrays !== this.arrays || opts.msResolution !== this.ms) {
      this.ts = [];
      this.at = [];
      this.len = [];
      this.arrays = opts.arrays;
      this.ms = opts.msResolution;
    }
    if (this.ts[i] === tsMs) {
      w.copyWritten(this.at[i]!, this.len[i]!);
      return;
    }
    const t = opts.msResolution ? tsMs : Math.floor(tsMs / 1000);
    const at = w.length;
    if (i > 0) w.byte(COMMA);
    if (opts.arrays) {
      w.byte(OPEN_BRACKET);
      w.integer(t);
      w.byte(COMMA);
    } else {
      w.byte(QUOTE);
      w.integer(t);
      w.byte(QUOTE);
      w.byte(COLON);
    }
    this.ts[i] = tsMs;
    this.at[i] = at;
    this.len[i] = w.length - at;
  }
}

function estimateBytes(series: readonly OutputSeries[]): number {
  let n = 256;
  for (const s of series) n += 256 + s.points.count * 24;
  return Math.min(n, 64 << 20);
}

/** A growing byte buffer for JSON output. */
class JsonBytes {
  private buf: Buffer;
  private len = 0;

  constructor(initial: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, initial));
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /** A string of ASCII characters only (numbers, punctuation). */
  ascii(s: string): void {
    this.ensure(s.length);
    const b = this.buf;
    let o = this.len;
    for (let k = 0; k < s.length; k++) b[o++] = s.charCodeAt(k);
    this.len = o;
  }

  /** One ASCII byte. */
  byte(c: number): void {
    this.ensure(1);
    this.buf[this.len++] = c;
  }

  /** An integer as String(n) prints it (safe integers: digits, a sign when negative). */
  integer(n: number): void {
    if (!Number.isSafeInteger(n)) {
      this.ascii(String(n));
      return;
    }
    this.ensure(17);
    const b = this.buf;
    let o = this.len;
    let x = n;
    if (x < 0) {
      b[o++] = MINUS;
      x = -x;
    }
    let digits = 1;
    for (let p = 10; p <= x && digits < 16; p *= 10) digits++;
    o += digits;
    this.len = o;
    while (x >= 10) {
      const q = Math.floor(x / 10);
      b[--o] = ZERO + (x - q * 10);
      x = q;
    }
    b[--o] = ZERO + x;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** Appends a copy of bytes [from, from + n) written before (short runs: a loop beats a native copy). */
  copyWritten(from: number, n: number): void {
    this.ensure(n);
    const b = this.buf;
    let o = this.len;
    for (let k = from; k < from + n; k++) b[o++] = b[k]!;
    this.len = o;
  }

  /** One point's value, as formatValue prints it (doubles of the plain range written directly). */
  value(v: number, isInt: boolean, nanAsNull: boolean): void {
    if (!isInt) {
      this.ensure(MAX_PLAIN_DOUBLE_BYTES);
      const o = writePlainDouble(this.buf, this.len, v);
      if (o >= 0) {
        this.len = o;
        return;
      }
    }
    this.ascii(formatValue(v, isInt, nanAsNull));
  }

  /** Any string, as UTF-8. */
  text(s: string): void {
    this.ensure(Buffer.byteLength(s, 'utf8'));
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  done(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

/** One value as Jackson writes OpenTSDB's longs and doubles. */
export function formatValue(v: number, isInt: boolean, nanAsNull: boolean): string {
  if (Number.isNaN(v)) return nanAsNull ? 'null' : '"NaN"';
  if (isInt && Number.isSafeInteger(v)) return String(v);
  if (!Number.isFinite(v)) return v > 0 ? '"Infinity"' : '"-Infinity"';
  return javaDouble(v);
}

/** A double as Java's Double.toString prints common values: 42.0, 0.5, 1.0E-5. */
export function javaDouble(v: number): string {
  // Most metrics carry at most two decimals. When v is the double nearest to m/100, the
  // decimal m/100 reads back as v and any other decimal of as few digits is at least 0.01
  // away, far beyond half an ulp below 1e7: so it is the shortest round-trip form that
  // String(v) prints, built here from small integers without the shortest-double search.
  const m = Math.round(v * 100);
  if (m / 100 === v && m !== 0 && m < 1e9 && m > -1e9) {
    const a = m < 0 ? -m : m;
    const whole = Math.floor(a / 100);
    const frac = a - whole * 100;
    const head = m < 0 ? `-${whole}.` : `${whole}.`;
    if (frac === 0) return `${head}0`;
    if (frac % 10 === 0) return head + String(frac / 10);
    return frac < 10 ? `${head}0${frac}` : head + String(frac);
  }
  return javaDoubleGeneral(v);
}

/** javaDouble without its two-decimal shortcut: String(v) in Java's forms. */
export function javaDoubleGeneral(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e7 || a < 1e-3)) {
    const [m, e] = v.toExponential().split('e');
    return `${m!.includes('.') ? m : `${m}.0`}E${Number(e)}`;
  }
  const s = String(v);
  return s.includes('.') || s.includes('e') ? s : `${s}.0`;
}
