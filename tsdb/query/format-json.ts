/**
 * /api/query's JSON exactly as OpenTSDB's serializer writes it (HttpJsonSerializer
 * #formatQueryAsyncV1): an array of `{metric, tags, aggregateTags, [query], [tsuids],
 * [annotations], [globalAnnotations], dps, [stats]}`, `dps` an object `{"<ts>": v}` or,
 * with `arrays`, `[[ts, v], …]`; integers printed as integers, doubles as Java prints
 * them (2.0, 1.0E7), NaN as the string "NaN" (or null under the null fill policy).
 * Written as UTF-8 bytes into one growing buffer, without an object per point.
 */

import { writePlainDouble, writeSafeInteger } from './format-double.js';

const COMMA = 44;
const QUOTE = 34;
const COLON = 58;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** The points of one output series: ms timestamps and values, with per-point kinds. */
export interface OutputPoints {
  readonly count: number;
  readonly ts: Float64Array;
  readonly values: Float64Array;
  /** 1 where the value is an integer (printed without a fraction). */
  readonly isInt: Uint8Array;
  /**
   * The exact int64 of integer points beyond ±2^53 (query/series.ts `exact`), printed as
   * OpenTSDB prints a long; absent when no such point needs it.
   */
  readonly exact?: BigInt64Array | undefined;
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
  const keys = DpsKeys.shared();
  for (let i = 0; i < series.length; i++) {
    if (i > 0) w.ascii(',');
    writeSeries(w, series[i]!, opts, keys);
  }
}

/**
 * The JSON of tags objects already written. A series' tags come from the series-name
 * cache (series-names.ts) as one object for as long as its names stay, and a dashboard
 * asks for the same series again and again; tags objects are never changed once made.
 */
const tagsJson = new WeakMap<object, string>();

function tagsText(tags: Readonly<Record<string, string>>): string {
  let t = tagsJson.get(tags);
  if (t === undefined) tagsJson.set(tags, (t = JSON.stringify(tags)));
  return t;
}

function writeSeries(w: JsonBytes, s: OutputSeries, opts: FormatOptions, keys: DpsKeys): void {
  const aggregateTags = s.aggregateTags.length === 0 ? '[]' : JSON.stringify(s.aggregateTags);
  let head = `{"metric":${JSON.stringify(s.metric)},"tags":${tagsText(s.tags)},"aggregateTags":${aggregateTags}`;
  if (s.query !== undefined) head += `,"query":${JSON.stringify(s.query)}`;
  if (s.tsuids !== undefined) head += `,"tsuids":${JSON.stringify(s.tsuids)}`;
  if (s.annotations !== undefined && s.annotations.length > 0) head += `,"annotations":${JSON.stringify(s.annotations)}`;
  if (s.globalAnnotations !== undefined && s.globalAnnotations.length > 0) head += `,"globalAnnotations":${JSON.stringify(s.globalAnnotations)}`;
  w.text(`${head},"dps":`);
  writeDps(w, s.points, opts, keys);
  if (s.stats !== undefined) w.text(`,"stats":${JSON.stringify(s.stats)}`);
  w.ascii('}');
}

/** Bytes one point may take: its key (`,"<ts>":` or `,[<ts>,`, String(ts) at most 24 characters), its value (at most 26) and `]`. */
const MAX_POINT_BYTES = 64;

/** `dps` as an object (keys in time order) or as [[ts, v], …] pairs. */
function writeDps(w: JsonBytes, p: OutputPoints, opts: FormatOptions, keys: DpsKeys): void {
  w.byte(opts.arrays ? OPEN_BRACKET : OPEN_BRACE);
  keys.prepare(p.count);
  w.points(p, opts, keys);
  w.byte(opts.arrays ? CLOSE_BRACKET : CLOSE_BRACE);
}

/**
 * The text before each point's value (`,"<ts>":` or `,[<ts>,`), by position. Output series
 * of one query mostly share their timestamps (downsampled buckets), so the text of the
 * previous series at the same position, kept as its own bytes, is reused when the timestamp
 * is the same. Formatting is synchronous, so one instance serves every answer of this
 * thread in turn, forgetting the texts of the previous one (`shared`).
 */
class DpsKeys {
  private static instance: DpsKeys | undefined;
  ts = new Float64Array(0);
  /** Position i's text, as ASCII bytes. */
  text: Uint8Array[] = [];
  /** Positions written since the last `shared()`. */
  private used = 0;

  /** This thread's instance, holding no texts (one answer's, in one shape, at a time). */
  static shared(): DpsKeys {
    const k = (DpsKeys.instance ??= new DpsKeys());
    k.ts.fill(Number.NaN, 0, k.used);
    k.text = [];
    k.used = 0;
    return k;
  }

  /** Room for a series of n points. */
  prepare(n: number): void {
    if (n > this.used) this.used = n;
    if (n <= this.ts.length) return;
    const ts = new Float64Array(Math.max(n, this.ts.length * 2)).fill(Number.NaN);
    ts.set(this.ts);
    this.ts = ts;
  }
}

function estimateBytes(series: readonly OutputSeries[]): number {
  let n = 256;
  for (const s of series) n += 256 + s.points.count * 24;
  return Math.min(n, 64 << 20);
}

/** Answers estimated at up to this many bytes start in the shared slab. */
const SLAB_MAX_BYTES = 32 * 1024;
const SLAB_BYTES = 256 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/**
 * A growing byte buffer for JSON output. A small answer starts in a shared slab, and what
 * its estimate left unused goes back when it is done (when nothing was carved after it):
 * a small query's answer otherwise takes a quarter of Node's 8 KiB Buffer pool for its
 * estimate, and refilling the pool (a fresh ArrayBuffer) every few queries costs more than
 * formatting them. The answer is a view of the slab: never transfer its buffer.
 */
class JsonBytes {
  private buf: Buffer;
  private len = 0;
  /** Where buf starts in `slab`, while it is the slab's last carve (else -1). */
  private slabAt = -1;

  constructor(initial: number) {
    const n = (Math.max(64, initial) + 7) & ~7;
    if (n > SLAB_MAX_BYTES) {
      this.buf = Buffer.allocUnsafe(n);
      return;
    }
    if (slabUsed + n > slab.length) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      slabUsed = 0;
    }
    this.slabAt = slabUsed;
    this.buf = slab.subarray(slabUsed, slabUsed + n);
    slabUsed += n;
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
    this.len = writeAscii(this.buf, this.len, s);
  }

  /** One ASCII byte. */
  byte(c: number): void {
    this.ensure(1);
    this.buf[this.len++] = c;
  }

  /**
   * The points of one series, each as its key text (keys.prepare'd for them) and value:
   * the body of writeDps, written with one bounds check a point.
   */
  points(p: OutputPoints, opts: FormatOptions, keys: DpsKeys): void {
    const { ts, values, isInt } = p;
    const nanAsNull = p.nanAsNull === true;
    const { arrays, msResolution } = opts;
    const kts = keys.ts;
    const ktext = keys.text;
    for (let i = 0; i < p.count; i++) {
      this.ensure(MAX_POINT_BYTES);
      const b = this.buf;
      let o = this.len;
      const tsMs = ts[i]!;
      if (kts[i] === tsMs) {
        // Short runs: a loop beats a native copy.
        const k = ktext[i]!;
        for (let j = 0; j < k.length; j++) b[o++] = k[j]!;
      } else {
        const start = o;
        if (i > 0) b[o++] = COMMA;
        b[o++] = arrays ? OPEN_BRACKET : QUOTE;
        const t = msResolution ? tsMs : Math.floor(tsMs / 1000);
        o = Number.isSafeInteger(t) ? writeSafeInteger(b, o, t) : writeAscii(b, o, String(t));
        if (arrays) b[o++] = COMMA;
        else {
          b[o++] = QUOTE;
          b[o++] = COLON;
        }
        kts[i] = tsMs;
        ktext[i] = new Uint8Array(b.subarray(start, o));
      }
      const v = values[i]!;
      if (isInt[i] === 1) {
        o = Number.isSafeInteger(v) ? writeSafeInteger(b, o, v) : writeAscii(b, o, p.exact !== undefined && Number.isFinite(v) ? String(p.exact[i]!) : formatValue(v, true, nanAsNull));
      } else {
        const end = writePlainDouble(b, o, v);
        o = end >= 0 ? end : writeAscii(b, o, formatValue(v, false, nanAsNull));
      }
      if (arrays) b[o++] = CLOSE_BRACKET;
      this.len = o;
    }
  }

  /** Any string, as UTF-8. */
  text(s: string): void {
    this.ensure(Buffer.byteLength(s, 'utf8'));
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  done(): Buffer {
    const at = this.slabAt;
    // Still the slab's last carve: give back the unused tail (8-aligned).
    if (at >= 0 && this.buf.buffer === slab.buffer && slabUsed === at + this.buf.length) slabUsed = at + ((this.len + 7) & ~7);
    this.slabAt = -1;
    return this.buf.subarray(0, this.len);
  }
}

/** Writes s (ASCII characters only) at `at`; returns the offset after it. */
function writeAscii(b: Uint8Array, at: number, s: string): number {
  let o = at;
  for (let k = 0; k < s.length; k++) b[o++] = s.charCodeAt(k);
  return o;
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
