/**
 * The timestamp section of a compressed hour cell (tsdb/SCHEMA.md, "Timestamp
 * section"): ms offsets within the hour in one of
 *   TS_REGULAR  first offset and step: 0 bits per point (the common case);
 *   TS_DOD      first offset, first delta, a stream of zigzag delta-of-deltas (irregular
 *               data, or a few late points: a sparse stream);
 *   TS_GRID     points on a grid origin + slot * step, plus a small residual each: a
 *               stream of skipped slots per point (missing points cost a few bits each,
 *               not two large delta-of-deltas) and a stream of zigzag residuals (per-point
 *               jitter, cheaper than delta-of-deltas: no differencing of the noise). With
 *               step = the gcd of the deltas the residuals are all zero; with step 1 the
 *               skipped slots are plain deltas - 1 (random event times).
 * The encoder prices each candidate exactly and writes the smallest.
 */
import type { BitReader } from './bit-reader.js';
import type { BitWriter } from './bit-writer.js';
import { MAX_OFFSET_MS, TS_DOD, TS_GRID, TS_REGULAR } from './hour-format.js';
import { growF64, planStream, readStream, writeStream } from './stream-codec.js';

let a: Float64Array = new Float64Array(1024);
let b: Float64Array = new Float64Array(1024);
/** Scratch kept between calls up to this many entries; a bigger hour gets fresh arrays. */
const KEEP = 1 << 16;

function trimScratch(): void {
  if (a.length > KEEP) a = new Float64Array(1024);
  if (b.length > KEEP) b = new Float64Array(1024);
}

/** Deltas whose median is the jitter grid's step candidate (63, spread over the hour). */
const sample = new Int32Array(63);

const uvarintBits = (v: number): number => 8 * (v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : 4);

function gcd(x: number, y: number): number {
  while (y !== 0) {
    const t = x % y;
    x = y;
    y = t;
  }
  return x;
}

/** Fills a (skipped slots, n - 1) and b (zigzag residuals, n) for a grid of `step`; false if the points do not fit one. */
function gridStreams(offsets: Int32Array, n: number, step: number, exact: boolean): boolean {
  // Divisions by `step` are multiplications by its reciprocal (integer division is slow);
  // an off-by-one rounding only moves a point to the next slot with a larger residual.
  const inv = 1 / step;
  const t0 = offsets[0]!;
  let phase = 0;
  if (!exact) {
    for (let i = 1; i < n; i++) {
      const d = offsets[i]! - t0;
      phase += d - Math.round(d * inv) * step; // in (-step/2, step/2]
    }
  }
  const origin = t0 + Math.round(phase / n);
  let prevSlot = -1;
  for (let i = 0; i < n; i++) {
    const slot = Math.round((offsets[i]! - origin) * inv);
    if (slot <= prevSlot || (i === 0 && slot !== 0)) return false;
    if (i > 0) a[i - 1] = slot - prevSlot - 1;
    const e = offsets[i]! - origin - slot * step;
    b[i] = e >= 0 ? 2 * e : -2 * e - 1; // zigzag, inlined
    prevSlot = slot;
  }
  return true;
}

/** Writes offsets[0..n) (n >= 1, validated by the caller). */
export function encodeTimestamps(w: BitWriter, offsets: Int32Array, n: number): void {
  const first = offsets[0]!;
  const step0 = n > 1 ? offsets[1]! - first : 0;
  let regular = true;
  for (let i = 2; i < n && regular; i++) regular = offsets[i]! - offsets[i - 1]! === step0;
  if (regular) {
    w.writeU8(TS_REGULAR);
    w.writeUvarint(first);
    if (n > 1) w.writeUvarint(step0);
    return;
  }
  let g = step0;
  for (let i = 2; i < n && g !== 1; i++) g = gcd(offsets[i]! - offsets[i - 1]!, g);
  a = growF64(a, n);
  b = growF64(b, n);
  // Candidates: the gcd grid, the median-delta grid (jitter), then delta-of-deltas.
  let gridBits = Infinity;
  let gridStep = 0;
  const len = Math.min(n - 1, sample.length);
  for (let i = 0; i < len; i++) {
    const j = Math.floor((i * (n - 1)) / len); // evenly spread over the hour
    sample[i] = offsets[j + 1]! - offsets[j]!;
  }
  const median = sample.subarray(0, len).sort()[len >> 1]!; // typed-array sort: numeric, native
  // A jittered median (10002) usually means a round period (10000): try that too.
  const unit = 10 ** Math.max(0, Math.floor(Math.log10(median)) - 1);
  const round = Math.round(median / unit) * unit;
  const steps: number[] = [];
  if (median !== g) steps.push(median);
  if (round !== g && round !== median) steps.push(round);
  steps.push(g); // last: skipped when its deltas in units of g surely cost more than the best so far
  for (const step of steps) {
    if (step > MAX_OFFSET_MS) continue; // (a rounded median of 3,599,998 never fits a grid; never write it)
    if (step === g && steps.length > 1 && (n - 1) * Math.log2(median / g) > gridBits) continue;
    if (!gridStreams(offsets, n, step, step === g)) continue;
    const bits = uvarintBits(step) + planStream(a, n - 1, 31, 32).bits + planStream(b, n, 31, 32).bits;
    if (bits < gridBits) {
      gridBits = bits;
      gridStep = step;
    }
  }
  let prev = step0;
  for (let i = 2; i < n; i++) {
    const d = offsets[i]! - offsets[i - 1]!;
    a[i - 2] = d >= prev ? 2 * (d - prev) : 2 * (prev - d) - 1; // zigzag(d - prev)
    prev = d;
  }
  const dod = planStream(a, n - 2, 31, 32);
  if (dod.bits + uvarintBits(step0) <= gridBits) {
    w.writeU8(TS_DOD);
    w.writeUvarint(first);
    w.writeUvarint(step0);
    writeStream(w, dod, a, n - 2, 32);
    trimScratch();
    return;
  }
  w.writeU8(TS_GRID);
  w.writeUvarint(first);
  w.writeUvarint(gridStep);
  gridStreams(offsets, n, gridStep, gridStep === g);
  writeStream(w, planStream(a, n - 1, 31, 32), a, n - 1, 32);
  writeStream(w, planStream(b, n, 31, 32), b, n, 32);
  trimScratch();
}

/**
 * Reads n >= 1 offsets into out[0..n); throws HourCodecError unless strictly ascending in
 * the hour. Returns the scheme.
 */
export function decodeTimestamps(r: BitReader, out: Int32Array, n: number): number {
  const scheme = r.readU8();
  const first = r.readUvarintIn(0, MAX_OFFSET_MS, 'first offset');
  out[0] = first;
  if (n === 1) {
    if (scheme !== TS_REGULAR) r.fail(`timestamp scheme ${scheme} for one point`);
    return scheme;
  }
  const step = r.readUvarintIn(1, MAX_OFFSET_MS, 'timestamp step');
  if (scheme === TS_REGULAR) {
    if (first + (n - 1) * step > MAX_OFFSET_MS) r.fail('regular timestamps run past the hour');
    for (let i = 1, t = first; i < n; i++) out[i] = t += step;
    return scheme;
  }
  if (scheme !== TS_DOD && scheme !== TS_GRID) r.fail(`unknown timestamp scheme ${scheme}`);
  if (n === 2) r.fail(`timestamp scheme ${scheme} for two points`);
  a = growF64(a, n);
  if (scheme === TS_DOD) {
    readStream(r, a, n - 2, 31, 32);
    let t = first;
    let delta = step;
    for (let i = 1; i < n; i++) {
      if (i > 1) {
        const u = a[i - 2]!;
        delta += u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      t += delta;
      if (delta < 1 || t > MAX_OFFSET_MS) r.fail('timestamps not ascending within the hour');
      out[i] = t;
    }
    trimScratch();
    return scheme;
  }
  b = growF64(b, n);
  readStream(r, a, n - 1, 31, 32);
  readStream(r, b, n, 31, 32);
  const r0 = b[0]!;
  const origin = first - (r0 % 2 === 0 ? r0 / 2 : -(r0 + 1) / 2);
  let slot = 0;
  let prev = first;
  for (let i = 1; i < n; i++) {
    slot += a[i - 1]! + 1;
    const u = b[i]!;
    const t = origin + slot * step + (u % 2 === 0 ? u / 2 : -(u + 1) / 2);
    if (t <= prev || t > MAX_OFFSET_MS) r.fail('timestamps not ascending within the hour');
    out[i] = prev = t;
  }
  trimScratch();
  return scheme;
}
