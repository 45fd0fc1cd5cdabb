/**
 * The compressed hour cell (qualifier 0x0C): all points of one closed series-hour in one
 * value. Byte format: tsdb/SCHEMA.md, "Compressed hour cell". Layout:
 *   header byte (version, kind mode, big-int flag, summary flag), uvarint count,
 *   summary (flag only: NaN count, sum), timestamp section (timestamps-codec.ts),
 *   kind bitmap (mixed kinds only),
 *   value section (values-codec.ts), big-integer side list (flag only).
 *
 * Encoding is synchronous and reuses one module-level writer; decoding allocates nothing
 * when `out` is large enough.
 */
import { BitReader } from './bit-reader.js';
import { BitWriter } from './bit-writer.js';
import { HourCodecError } from './errors.js';
import {
  FLAG_BIG_INTS, FLAG_SUMMARY, HOUR_FORMAT_VERSION, KIND_ALL_FLOAT, KIND_ALL_INT, KIND_MIXED, MAX_OFFSET_MS, MAX_POINTS,
  SUMMARY_MIN_POINTS,
} from './hour-format.js';
import { isBigInt64, pointCapacity } from './point-block.js';
import type { PointBlock } from './point-block.js';
import { decodeTimestamps, encodeTimestamps } from './timestamps-codec.js';
import { decodeValues, encodeValues } from './values-codec.js';

const writer = new BitWriter(4096);

/** Scratch for a float64's big-endian bytes. */
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Writes v as 8 big-endian bytes (its exact bits). */
function writeF64(w: BitWriter, v: number): void {
  f64[0] = v;
  for (let k = 0; k < 8; k++) w.writeU8(f64Bytes[LITTLE_ENDIAN ? 7 - k : k]!);
}

/** The float64 whose big-endian bytes are bytes[p, p + 8) (REQUIRES: they exist). */
function f64At(bytes: Uint8Array, p: number): number {
  for (let k = 0; k < 8; k++) f64Bytes[LITTLE_ENDIAN ? 7 - k : k] = bytes[p + k]!;
  return f64[0]!;
}

function readF64(r: BitReader): number {
  const p = r.pos;
  if (p + 8 > r.end) r.fail('truncated');
  r.pos = p + 8;
  return f64At(r.buf, p);
}

/**
 * values[0, n) as a summary adds them (aggregators.ts sumD): NaN skipped and counted, the
 * rest added in time order from 0.
 */
function sumValues(values: Float64Array, n: number): { sum: number; nan: number } {
  let sum = 0;
  let nan = 0;
  for (let i = 0; i < n; i++) {
    const x = values[i]!;
    if (x === x) sum += x;
    else nan++;
  }
  return { sum, nan };
}

/**
 * What a summary holds: the points that are not NaN, and the sum of their values added
 * in time order from 0 (the exact double that a `sum` over the whole hour computes).
 */
export interface HourSummary {
  readonly count: number;
  readonly nonNaN: number;
  readonly sum: number;
}

function checkBlock(b: PointBlock): void {
  const n = b.count;
  if (!Number.isInteger(n) || n < 0 || n > MAX_POINTS) throw new RangeError(`PointBlock.count ${n} outside 0..${MAX_POINTS}`);
  if (pointCapacity(b) < n || (b.bigInts !== undefined && b.bigInts.length < n)) {
    throw new RangeError(`PointBlock arrays shorter than count ${n}`);
  }
  const o = b.offsetsMs;
  if (n > 0 && (o[0]! < 0 || o[n - 1]! > MAX_OFFSET_MS)) throw new RangeError(`offsets outside 0..${MAX_OFFSET_MS}`);
  for (let i = 1; i < n; i++) {
    if (o[i]! <= o[i - 1]!) throw new RangeError(`offsets not strictly ascending at point ${i}`);
  }
}

/** Encodes the block's points into a new compressed hour cell value. */
export function encodeHourBlock(b: PointBlock): Uint8Array {
  checkBlock(b);
  const n = b.count;
  let ints = 0;
  for (let i = 0; i < n; i++) if (b.isInt[i] !== 0) ints++;
  const kind = ints === n ? (n === 0 ? KIND_ALL_FLOAT : KIND_ALL_INT) : ints === 0 ? KIND_ALL_FLOAT : KIND_MIXED;
  const big = b.bigInts;
  let bigCount = 0;
  if (big !== undefined) for (let i = 0; i < n; i++) if (b.isInt[i] !== 0 && isBigInt64(big[i]!)) bigCount++;

  const summary = n >= SUMMARY_MIN_POINTS;
  const w = writer;
  w.reset();
  w.writeU8((HOUR_FORMAT_VERSION << 4) | (kind << 2) | (bigCount > 0 ? FLAG_BIG_INTS : 0) | (summary ? FLAG_SUMMARY : 0));
  w.writeUvarint(n);
  if (n === 0) return w.finish();
  if (summary) {
    const { sum, nan } = sumValues(b.values, n);
    w.writeUvarint(nan);
    writeF64(w, sum);
  }
  encodeTimestamps(w, b.offsetsMs, n);
  if (kind === KIND_MIXED) {
    for (let i = 0; i < n; i++) w.writeBits(b.isInt[i] !== 0 ? 1 : 0, 1);
    w.align();
  }
  encodeValues(w, b.values, n);
  if (bigCount > 0) {
    w.writeUvarint(bigCount);
    let prev = -1;
    for (let i = 0; i < n; i++) {
      const v = big![i]!;
      if (b.isInt[i] === 0 || !isBigInt64(v)) continue;
      w.writeUvarint(i - prev - 1);
      prev = i;
      const u = BigInt.asUintN(64, v);
      w.writeU32(Number(u >> 32n));
      w.writeU32(Number(u & 0xffffffffn));
    }
  }
  const cell = w.finish();
  if (w.buf.length > 1 << 20) w.buf = new Uint8Array(4096); // do not keep a huge hour's buffer
  return cell;
}

function readHeader(r: BitReader): { kind: number; bigInts: boolean; summary: boolean; count: number } {
  const h = r.readU8();
  if (h >> 4 !== HOUR_FORMAT_VERSION) r.fail(`format version ${h >> 4}`);
  const kind = (h >> 2) & 3;
  if (kind > KIND_MIXED) r.fail(`header byte 0x${h.toString(16)}`);
  const count = r.readUvarintIn(0, MAX_POINTS, 'point count');
  return { kind, bigInts: (h & FLAG_BIG_INTS) !== 0, summary: (h & FLAG_SUMMARY) !== 0, count };
}

/** Reads the summary after the count (the flag is set): the NaN count, then the sum. */
function readSummary(r: BitReader, count: number): HourSummary {
  if (count === 0) r.fail('summary on an empty cell');
  const nan = r.readUvarintIn(0, count, 'NaN count');
  return { count, nonNaN: count - nan, sum: readF64(r) };
}

/**
 * Cheap: the cell's summary from its first bytes, without decoding the points; undefined
 * when the cell has none (fewer points than SUMMARY_MIN_POINTS, or an older encoder).
 */
export function hourBlockSummary(bytes: Uint8Array): HourSummary | undefined {
  // A summary read in place (a query reads one per hour row); anything else (no summary,
  // another version, a long or bad varint, a short cell) takes the checked path, which
  // throws as decoding would.
  const h = bytes[0];
  if (h !== undefined && h >> 4 === HOUR_FORMAT_VERSION && ((h >> 2) & 3) <= KIND_MIXED && (h & FLAG_SUMMARY) !== 0) {
    // count: a uvarint of up to 3 bytes (< 2^21 points); nan: one byte (< 128).
    let p = 1;
    let count = -1;
    for (let v = 0, shift = 0; shift < 21; shift += 7) {
      const b = bytes[p++];
      if (b === undefined) break;
      v += (b & 0x7f) << shift;
      if (b < 0x80) {
        count = v;
        break;
      }
    }
    const nan = bytes[p++] ?? 0x80;
    if (count > 0 && nan < 0x80 && nan <= count && p + 8 <= bytes.length) return { count, nonNaN: count - nan, sum: f64At(bytes, p) };
  }
  return hourBlockSummaryChecked(bytes);
}

/** hourBlockSummary through the checked reader only (what its fast path must agree with). */
export function hourBlockSummaryChecked(bytes: Uint8Array): HourSummary | undefined {
  const r = new BitReader(bytes);
  const { summary, count } = readHeader(r);
  return summary ? readSummary(r, count) : undefined;
}

/** Cheap: the point count from the header, without decoding. */
export function hourBlockCount(bytes: Uint8Array): number {
  return readHeader(new BitReader(bytes)).count;
}

/**
 * Decodes the cell and checks its summary against its points: a message naming what
 * disagrees, or undefined when it agrees or there is none (fsck; queries trust it).
 * Throws HourCodecError as decodeHourBlock does.
 */
export function checkHourSummary(bytes: Uint8Array): string | undefined {
  const sm = hourBlockSummary(bytes);
  if (sm === undefined) return undefined;
  const b = decodeHourBlock(bytes);
  const { sum, nan } = sumValues(b.values, b.count);
  const nonNaN = b.count - nan;
  if (nonNaN !== sm.nonNaN) return `hour summary counts ${sm.nonNaN} values that are not NaN, the points ${nonNaN}`;
  if (!Object.is(sum, sm.sum)) return `hour summary sum ${sm.sum} differs from the points' ${sum}`;
  return undefined;
}

/** Cheap: the count and the first offset (-1 when empty), without decoding the rest. */
export function hourBlockInfo(bytes: Uint8Array): { count: number; firstOffsetMs: number } {
  const r = new BitReader(bytes);
  const { summary, count } = readHeader(r);
  if (count === 0) return { count, firstOffsetMs: -1 };
  if (summary) readSummary(r, count);
  r.readU8();
  return { count, firstOffsetMs: r.readUvarintIn(0, MAX_OFFSET_MS, 'first offset') };
}

function prepare(out: PointBlock | undefined, n: number): PointBlock {
  if (out === undefined) {
    return { count: 0, offsetsMs: new Int32Array(n), values: new Float64Array(n), isInt: new Uint8Array(n) };
  }
  if (out.offsetsMs.length < n) out.offsetsMs = new Int32Array(n);
  if (out.values.length < n) out.values = new Float64Array(n);
  if (out.isInt.length < n) out.isInt = new Uint8Array(n);
  return out;
}

/**
 * Decodes into `out` (grown if needed; may be reused across calls); returns it. Throws
 * HourCodecError on malformed input (never loops or reads out of bounds).
 */
export function decodeHourBlock(bytes: Uint8Array, out?: PointBlock): PointBlock {
  return decode(bytes, out, undefined);
}

/** What a cell is made of (for tests, dumps and tuning): the schemes it uses. */
export interface HourCellLayout {
  count: number;
  kindMode: number;
  bigInts: boolean;
  /** TS_* of hour-format.ts, -1 when empty. */
  timestampScheme: number;
  /** VAL_* of hour-format.ts, one per chunk. */
  valueSchemes: number[];
  /** The summary after the count, when the cell has one. */
  summary?: HourSummary;
}

/** Decodes the cell (throwing like decodeHourBlock) and reports its schemes. */
export function inspectHourBlock(bytes: Uint8Array): HourCellLayout {
  const layout: HourCellLayout = { count: 0, kindMode: 0, bigInts: false, timestampScheme: -1, valueSchemes: [] };
  decode(bytes, undefined, layout);
  return layout;
}

function decode(bytes: Uint8Array, out: PointBlock | undefined, layout: HourCellLayout | undefined): PointBlock {
  const r = new BitReader(bytes);
  const { kind, bigInts, summary, count: n } = readHeader(r);
  const b = prepare(out, n);
  b.count = 0;
  b.bigInts = undefined;
  if (n === 0) {
    if (kind !== KIND_ALL_FLOAT || bigInts || summary) r.fail('flags on an empty cell');
  } else {
    const sm = summary ? readSummary(r, n) : undefined;
    const ts = decodeTimestamps(r, b.offsetsMs, n);
    if (layout !== undefined) Object.assign(layout, { count: n, kindMode: kind, bigInts, timestampScheme: ts }, sm === undefined ? {} : { summary: sm });
    if (kind === KIND_MIXED) {
      readKindBitmap(r, b.isInt, n);
    } else {
      b.isInt.fill(kind === KIND_ALL_INT ? 1 : 0, 0, n);
    }
    decodeValues(r, b.values, n, layout?.valueSchemes);
    if (bigInts) readBigInts(r, b, n);
  }
  if (r.pos !== bytes.length) r.fail(`${bytes.length - r.pos} trailing bytes`);
  b.count = n;
  return b;
}

/**
 * The kind bitmap: n bits, MSB first, padded to a byte (what beginBits, n readBits(1) and
 * endBits read, and failing as endBits does when it runs past the cell), a byte at a time.
 */
function readKindBitmap(r: BitReader, isInt: Uint8Array, n: number): void {
  const buf = r.buf;
  const p = r.pos;
  const bytes = (n + 7) >> 3;
  if (p + bytes > r.end) throw new HourCodecError('truncated bit section', r.end);
  const whole = n >> 3;
  for (let q = 0; q < whole; q++) {
    const x = buf[p + q]!;
    const i = q << 3;
    isInt[i] = x >> 7;
    isInt[i + 1] = (x >> 6) & 1;
    isInt[i + 2] = (x >> 5) & 1;
    isInt[i + 3] = (x >> 4) & 1;
    isInt[i + 4] = (x >> 3) & 1;
    isInt[i + 5] = (x >> 2) & 1;
    isInt[i + 6] = (x >> 1) & 1;
    isInt[i + 7] = x & 1;
  }
  for (let i = whole << 3; i < n; i++) isInt[i] = (buf[p + (i >> 3)]! >> (7 - (i & 7))) & 1;
  r.pos = p + bytes;
  r.win = 0;
  r.nb = 0;
}

function readBigInts(r: BitReader, b: PointBlock, n: number): void {
  const m = r.readUvarintIn(1, n, 'big integer count');
  const big = new BigInt64Array(n);
  let i = -1;
  for (let e = 0; e < m; e++) {
    i += r.readUvarintIn(0, n, 'big integer gap') + 1;
    if (i >= n) r.fail('big integer index past the last point');
    if (b.isInt[i] !== 1) r.fail(`big integer for float point ${i}`);
    const v = BigInt.asIntN(64, (BigInt(r.readU32()) << 32n) | BigInt(r.readU32()));
    if (!isBigInt64(v)) r.fail(`big integer ${v} fits a float64`);
    big[i] = v;
  }
  b.bigInts = big;
}
