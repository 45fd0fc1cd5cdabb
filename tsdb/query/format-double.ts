/**
 * A double printed as JavaScript prints it (Number::toString: the fewest significant
 * digits that read back as the same double, the closest such when several, the even one
 * on a tie), written straight into a byte buffer in Java's plain form (`42.0`, `0.5`), for
 * |v| in [1e-3, 1e7): Java's Double.toString range without an exponent, which is what
 * OpenTSDB's query output holds. For the 16-17 digit values that averages produce it
 * takes about half the time of String(v) and the copy of its characters.
 *
 * Method, for a = |v| with 10^e <= a < 10^(e+1):
 *  0. Two decimals or fewer, m = round(a * 100) with m / 100 === a: the whole part, a dot
 *     and one or two digits of m (as javaDouble's shortcut, format-json.ts).
 *  1. 15 digits or fewer: d = round(a * 10^(14-e)). The 15-digit decimal d * 10^(e-14)
 *     reads back as `a` exactly when d / 10^(14-e) === a (both operands exact doubles, so
 *     the division is the correctly rounded reading). At most one 15-digit decimal lies
 *     in a's rounding interval (its width is under 2.3e-16 relative, the digits' spacing
 *     at least 1e-15), and rounding the product finds it (its error is under 0.18 of a
 *     unit). Its trailing zeros stripped, it is the shortest form.
 *  2. Otherwise x = a * 10^s with s = 16 - e, so that x is in [1e16, 1e17), is computed
 *     exactly as hi + lo (Dekker's TwoProduct; 10^s is an exact double), and so is the
 *     rounding interval [x - h, x + h] (h: half an ulp of `a` times 10^s). h is at least
 *     0.555, so the nearest integer to x always reads back (17 digits). A 16-digit form
 *     exists when a multiple of 10 lies in the interval. In this range every number those
 *     tests compare is exact (see below), so plain comparisons decide them.
 * Returns the offset after the written bytes, or -1 (nothing written) for values outside
 * that range, zero, NaN and infinities: the caller prints those another way.
 */

/** 10^k for k in [0, 22]: exact doubles. */
const P10 = Float64Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
/** Dekker's split of each power (high 26 bits and the rest) for TwoProduct. */
const SPLITTER = 134217729; // 2^27 + 1
const P10_HI = P10.map((p) => {
  const c = SPLITTER * p;
  return c - (c - p);
});
const P10_LO = P10.map((p, k) => p - P10_HI[k]!);
/** 10^e as doubles for e in [-3, 7], at index e + 3 (1e-3 .. 1e-1 are the nearest doubles, just above). */
const DECADE = Float64Array.from([1e-3, 1e-2, 1e-1, 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7]);
/** 2^k for k in [-80, 0], at index k + 80. */
const POW2 = Float64Array.from({ length: 81 }, (_, i) => 2 ** (i - 80));
/** The decimal exponent of the smallest double with binary exponent E (biased, 1013..1046), at E - 1013. */
const DECIMAL_OF_BINARY = Int8Array.from({ length: 34 }, (_, i) => Math.floor((i + 1013 - 1023) * Math.LOG10E * Math.LN2));
/** "00".."99" as byte pairs. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 48 + (i & 1 ? (i >> 1) % 10 : Math.floor((i >> 1) / 10)));

const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
/** Index of the high 32-bit word of a float64 on this machine. */
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** Scratch for up to 17 digit characters, most significant first. */
const digits = new Uint8Array(18);

const DOT = 46;
const ZERO = 48;
const MINUS = 45;

export const PLAIN_MIN = 1e-3;
export const PLAIN_MAX = 1e7;

export function writePlainDouble(buf: Uint8Array, at: number, v: number): number {
  let o = at;
  let a = v;
  if (!(a >= PLAIN_MIN && a < PLAIN_MAX)) {
    if (!(a <= -PLAIN_MIN && a > -PLAIN_MAX)) return -1;
    a = -a;
    buf[o++] = MINUS;
  }
  // 0. Two decimals or fewer (what most metrics carry): when a is the double nearest to
  // m/100, the decimal m/100 reads back as a, and no other decimal of as few digits lies
  // in a's rounding interval (they are 0.01 apart, the interval under 2e-9 wide below
  // 1e7), so it is the shortest form, its trailing zeros stripped. m < 1e9 < 2^31.
  const m = Math.round(a * 100);
  if (m / 100 === a) {
    const whole = (m * 0.01) | 0; // floor(m / 100): exact below 2^31 (writeFixed)
    const frac = m - whole * 100;
    o = writeSmallUint(buf, o, whole);
    buf[o++] = DOT;
    if (frac % 10 === 0) {
      buf[o++] = ZERO + frac / 10;
      return o;
    }
    const p = frac << 1;
    buf[o++] = PAIRS[p]!;
    buf[o++] = PAIRS[p + 1]!;
    return o;
  }

  bits[0] = a;
  const biased = words[HI]! >>> 20;
  // 10^e <= a < 10^(e+1): the decimal exponent of 2^E, or one more.
  let e = DECIMAL_OF_BINARY[biased - 1013]!;
  if (a >= DECADE[e + 4]!) e++;

  // 1. Fifteen digits or fewer.
  const s15 = 14 - e;
  const d = Math.round(a * P10[s15]!);
  if (d / P10[s15]! === a) {
    const hi7 = Math.floor(d / 1e8);
    writeFixed(digits, 0, hi7, 7);
    writeFixed(digits, 7, d - hi7 * 1e8, 8);
    let n = 15;
    while (digits[n - 1] === ZERO) n--;
    return writeDigits(buf, o, n, e);
  }

  // 2. Sixteen or seventeen: x = a * 10^s = hi + lo exactly.
  const s = 16 - e;
  const hi = a * P10[s]!;
  const c = SPLITTER * a;
  const ah = c - (c - a);
  const al = a - ah;
  const lo = ah * P10_HI[s]! - hi + ah * P10_LO[s]! + al * P10_HI[s]! + al * P10_LO[s]!;
  // hi >= 1e16 > 2^53: an even integer. x = hi + ri + r, ri an integer, r in [-0.5, 0.5).
  const ri = Math.round(lo);
  const r = lo - ri;
  // N0 = hi + ri = top * 1e8 + low, both int32s: t * 1e8 is exact (t < 2^30, 390625 * 256
  // = 1e8), and so is hi minus it (Sterbenz).
  let top = Math.floor(hi / 1e8);
  let low = hi - top * 390625 * 256 + ri;
  while (low < 0) {
    low += 1e8;
    top--;
  }
  while (low >= 1e8) {
    low -= 1e8;
    top++;
  }
  // The rounding interval [x - h, x + h], in units of x: half an ulp of a. (Below a power
  // of two it is half that, but no power of two of this range has a shorter decimal in
  // the difference: the test prints all 34.)
  const h = POW2[biased - 1076 + 80]! * P10[s]!;

  // Multiples of 10 near x: C0 = N0 - nm (nm = N0 mod 10) and C0 + 10, at distances
  // below = x - C0 and above = C0 + 10 - x. Every number compared here is exact: with
  // a = m * 2^q (m its 53-bit significand), x is m * 5^s * 2^(q+s) with q + s in
  // [-43, -19], so r, nm + r and 10 - nm - r are multiples of 2^-43 under 16, and h is
  // 5^s * 2^(q+s-1). No multiple of 10 can be an end of the interval: an end, a midpoint
  // between two doubles, is 5^s times an odd multiple of 2^(q+s-1) in x's units, not an
  // integer. So whether the ends read back as a (they do when m is even) never matters.
  const nm = (low | 0) % 10; // low is an integer in [0, 1e8): int32 arithmetic, no fmod
  const below = nm + r;
  const in0 = below < h; // true when C0 lies above x (nm = 0, r < 0)
  const in1 = 10 - nm - r < h;
  if (in0 || in1) {
    // The closer one (C0 when nm + r < 5); on a tie (nm = 5, r = 0) the even D16.
    let up: boolean;
    if (in0 && in1) {
      if (nm !== 5 || r !== 0) up = nm > 5 || (nm === 5 && r > 0);
      else up = (((low - nm) / 10) & 1) !== 0; // D16 = C0 / 10 is odd: take C0 + 10
    } else up = in1;
    // No carry into top: D16 would end in zeros, and step 1 would have found it.
    return writeTopLow(buf, o, e, top, (low - nm + (up ? 10 : 0)) / 10, 7);
  }
  // Seventeen digits: the nearest integer, the even one on a tie (r = -0.5: x is halfway
  // between N0 - 1 and N0).
  return writeTopLow(buf, o, e, top, r === -0.5 && (low & 1) !== 0 ? low - 1 : low, 8);
}

/**
 * Writes the integer x (a safe integer: |x| < 2^53) in decimal as String(x) does, at
 * `at`; returns the offset after it. At most 17 bytes.
 */
export function writeSafeInteger(buf: Uint8Array, at: number, x: number): number {
  let o = at;
  let a = x;
  if (a < 0) {
    buf[o++] = MINUS;
    a = -a;
  }
  if (a < 1e8) return writeSmallUint(buf, o, a);
  // a = hi * 1e8 + lo: both exact (hi * 1e8 < 2^53), hi < 1e8.
  const hi = Math.floor(a / 1e8);
  o = writeSmallUint(buf, o, hi);
  writeFixed(buf, o, a - hi * 1e8, 8);
  return o + 8;
}

/** Writes y, an integer in [0, 2^31), in decimal without leading zeros; returns the offset after it. */
function writeSmallUint(buf: Uint8Array, at: number, y: number): number {
  const n = y < 10 ? 1 : y < 100 ? 2 : y < 1e3 ? 3 : y < 1e4 ? 4 : y < 1e5 ? 5 : y < 1e6 ? 6 : y < 1e7 ? 7 : y < 1e8 ? 8 : y < 1e9 ? 9 : 10;
  writeFixed(buf, at, y, n);
  return at + n;
}

/**
 * The 9 + lowDigits digits of top (9 digits, the first not 0) then low (zero-padded) as
 * 0.d1d2… × 10^(e+1) in plain form (writeDigits' layout), written in place: for e >= 0 the
 * top digits go one byte to the right and the `e + 1` whole digits move back before the dot.
 */
function writeTopLow(buf: Uint8Array, at: number, e: number, top: number, low: number, lowDigits: number): number {
  let o = at;
  if (e < 0) {
    buf[o++] = ZERO;
    buf[o++] = DOT;
    for (let i = -1; i > e; i--) buf[o++] = ZERO;
    writeFixed(buf, o, top, 9);
    writeFixed(buf, o + 9, low, lowDigits);
    return o + 9 + lowDigits;
  }
  writeFixed(buf, o + 1, top, 9);
  const whole = e + 1; // <= 7 < 9
  for (let i = 0; i < whole; i++) buf[o + i] = buf[o + 1 + i]!;
  buf[o + whole] = DOT;
  writeFixed(buf, o + 10, low, lowDigits);
  return o + 10 + lowDigits;
}

/** Writes x (an integer in [0, 10^count), below 2^31) as exactly `count` digits, zero-padded, at `at`. */
function writeFixed(buf: Uint8Array, at: number, x: number, count: number): void {
  let y = x | 0;
  let i = at + count;
  while (i - at >= 2) {
    const q = (y * 0.01) | 0; // exact for 0 <= y < 2^31: the double 0.01 is above 1/100 by less than 1/y
    const p = (y - q * 100) << 1;
    buf[--i] = PAIRS[p + 1]!;
    buf[--i] = PAIRS[p]!;
    y = q;
  }
  if (i > at) buf[--i] = ZERO + y;
}

/** The digit characters digits[0, n) as 0.d1d2… × 10^(e+1), in plain form with at least one fraction digit. */
function writeDigits(buf: Uint8Array, at: number, n: number, e: number): number {
  let o = at;
  if (e < 0) {
    buf[o++] = ZERO;
    buf[o++] = DOT;
    for (let i = -1; i > e; i--) buf[o++] = ZERO;
    for (let i = 0; i < n; i++) buf[o++] = digits[i]!;
    return o;
  }
  const whole = e + 1;
  if (n <= whole) {
    for (let i = 0; i < n; i++) buf[o++] = digits[i]!;
    for (let i = n; i < whole; i++) buf[o++] = ZERO;
    buf[o++] = DOT;
    buf[o++] = ZERO;
    return o;
  }
  for (let i = 0; i < whole; i++) buf[o++] = digits[i]!;
  buf[o++] = DOT;
  for (let i = whole; i < n; i++) buf[o++] = digits[i]!;
  return o;
}
