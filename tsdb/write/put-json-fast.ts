/**
 * The allocation-light fast path for /api/put JSON bodies: one pass over the body's bytes
 * that checks the JSON grammar and, for every datapoint object, records the byte ranges
 * of its metric string and tags object (the series key, see series-byte-cache.ts) and its
 * timestamp and value as numbers — no objects are built.
 *
 * An object it cannot take whole (escapes in its strings, a fractional timestamp, a
 * missing field, a non-string tag value, …) is marked slow: the caller JSON.parses just
 * that object's bytes and takes the general path, which gives OpenTSDB's per-point error.
 * A body that is not well-formed JSON, not an object or array at the top, or nested
 * deeper than MAX_DEPTH makes scanPutJson return false: the caller parses it whole and
 * answers as before (400 "Unable to parse the given JSON", nothing stored).
 *
 * Typing matches the general path: a JSON number is an integer when its value is a safe
 * integer; a numeric string follows OpenTSDB's rule (no '.', 'e', 'E' → integer).
 */
import { MAX_MS_TIMESTAMP } from './data-point.js';
import { parseNumber } from './put-line-fast.js';
import { rangeEqual } from '../catalog/series-byte-cache.js';

/**
 * The datapoints of a body in columns (typed arrays, possibly longer than `count`: read
 * only [0, count)). `fast[k]` and `isInt[k]` are 1 or 0; the ranges, timestamp and value
 * are set only where fast[k] is 1.
 */
export interface JsonPutScan {
  count: number;
  objStart: Int32Array;
  objEnd: Int32Array;
  fast: Uint8Array;
  metricStart: Int32Array;
  metricEnd: Int32Array;
  tagsStart: Int32Array;
  tagsEnd: Int32Array;
  timestamp: Float64Array;
  value: Float64Array;
  isInt: Uint8Array;
  /**
   * 1 where this datapoint and the one before are both fast and their tags objects are the
   * same bytes (SeriesByteCache.get's `tagsAsBefore`).
   */
  sameTags: Uint8Array;
}

/** The ArrayBuffers of a scan's columns (each its own), to transfer them to another thread. */
export function scanBuffers(s: JsonPutScan): ArrayBuffer[] {
  return [s.objStart, s.objEnd, s.fast, s.metricStart, s.metricEnd, s.tagsStart, s.tagsEnd, s.timestamp, s.value, s.isInt, s.sameTags]
    .map((a) => a.buffer as ArrayBuffer);
}

/** Columns for about `n` datapoints. */
function newScan(n: number): JsonPutScan {
  return {
    count: 0,
    objStart: new Int32Array(n), objEnd: new Int32Array(n), fast: new Uint8Array(n),
    metricStart: new Int32Array(n), metricEnd: new Int32Array(n), tagsStart: new Int32Array(n), tagsEnd: new Int32Array(n),
    timestamp: new Float64Array(n), value: new Float64Array(n), isInt: new Uint8Array(n), sameTags: new Uint8Array(n),
  };
}

/** The columns copied into ones twice as long. */
function grownScan(o: JsonPutScan): JsonPutScan {
  const g = newScan(o.objStart.length * 2);
  g.count = o.count;
  g.objStart.set(o.objStart); g.objEnd.set(o.objEnd); g.fast.set(o.fast);
  g.metricStart.set(o.metricStart); g.metricEnd.set(o.metricEnd); g.tagsStart.set(o.tagsStart); g.tagsEnd.set(o.tagsEnd);
  g.timestamp.set(o.timestamp); g.value.set(o.value); g.isInt.set(o.isInt); g.sameTags.set(o.sameTags);
  return g;
}

/** Body bytes per datapoint assumed when sizing the columns (a devops point with 8 tags is ~230). */
const BYTES_PER_POINT_GUESS = 128;

const MAX_DEPTH = 64;
const Q = 0x22;
const BS = 0x5c;

function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

class Malformed extends Error {}
const MALFORMED = new Malformed('malformed');

/** Scans `b`; returns the datapoints, or undefined when the body needs JSON.parse. */
export function scanPutJson(b: Uint8Array): JsonPutScan | undefined {
  const s = new Scanner(b);
  try {
    return s.body();
  } catch (e) {
    if (e instanceof Malformed) return undefined;
    throw e;
  }
}

class Scanner {
  private readonly b: Uint8Array;
  private i = 0;
  private readonly dv: DataView;
  private readonly num = { value: 0, isInt: false };
  private out: JsonPutScan;
  /** The last tags object scanned whole: where it starts, its length, and what tags() said. */
  private lastTagsStart = 0;
  private lastTagsLength = 0;
  private lastTagsOk = false;
  /** Tags objects scanned whole so far: equal numbers mean equal tags bytes. */
  private tagsScanned = 0;
  /** tagsScanned as of the previous datapoint's tags, when it was fast; else -1. */
  private prevFastTags = -1;

  constructor(b: Uint8Array) {
    this.b = b;
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.out = newScan(Math.max(16, Math.ceil(b.length / BYTES_PER_POINT_GUESS)));
  }

  body(): JsonPutScan {
    this.ws();
    const c = this.b[this.i];
    if (c === 0x7b) {
      this.datapoint();
    } else if (c === 0x5b) {
      this.i++;
      this.ws();
      if (this.b[this.i] === 0x5d) {
        this.i++;
      } else {
        for (;;) {
          this.ws();
          if (this.b[this.i] === 0x7b) this.datapoint();
          else this.other();
          this.ws();
          const d = this.b[this.i++];
          if (d === 0x5d) break;
          if (d !== 0x2c) throw MALFORMED;
        }
      }
    } else {
      throw MALFORMED;
    }
    this.ws();
    if (this.i !== this.b.length) throw MALFORMED;
    return this.out;
  }

  /** An array element that is not an object: a slow "datapoint" (the general path rejects it). */
  private other(): void {
    const start = this.i;
    this.skipValue(1);
    this.push(start, false);
  }

  /** `tags`: tagsScanned as of this datapoint's tags object (fast ones). */
  private push(start: number, fast: boolean, tags = -1): number {
    if (this.out.count === this.out.objStart.length) this.out = grownScan(this.out);
    const o = this.out;
    const k = o.count++;
    o.objStart[k] = start;
    o.objEnd[k] = this.i;
    o.fast[k] = fast ? 1 : 0;
    o.sameTags[k] = fast && tags >= 0 && tags === this.prevFastTags ? 1 : 0;
    this.prevFastTags = fast ? tags : -1;
    return k;
  }

  private datapoint(): void {
    const b = this.b;
    const start = this.i++;
    let ok = true;
    let ms = -1;
    let me = -1;
    let ts = -1;
    let te = -1;
    let timestamp = -1;
    let value = NaN;
    let isInt = false;
    let tags = -1;
    this.ws();
    if (b[this.i] === 0x7d) {
      this.i++;
      this.push(start, false);
      return;
    }
    for (;;) {
      this.ws();
      const ks = this.i + 1;
      const clean = this.string();
      const ke = this.i - 1;
      this.ws();
      if (b[this.i++] !== 0x3a) throw MALFORMED;
      this.ws();
      const key = clean ? keyOf(b, ks, ke) : '';
      if (!clean) ok = false;
      const vs = this.i;
      if (key === 'metric' && b[vs] === Q) {
        if (!this.string() || this.i - 2 < vs + 1) ok = false;
        ms = vs + 1;
        me = this.i - 1;
      } else if (key === 'timestamp') {
        timestamp = this.timestampValue();
        if (timestamp < 0) ok = false;
      } else if (key === 'value') {
        value = this.numberValue();
        if (Number.isNaN(value)) ok = false;
        isInt = this.num.isInt;
      } else if (key === 'tags' && b[vs] === 0x7b) {
        if (!this.sameTagsAgain(vs)) ok = false;
        ts = vs;
        te = this.i;
        tags = this.tagsScanned;
      } else {
        this.skipValue(1);
        if (key === 'metric' || key === 'tags') ok = false;
      }
      this.ws();
      const d = b[this.i++];
      if (d === 0x7d) break;
      if (d !== 0x2c) throw MALFORMED;
    }
    const fast = ok && ms >= 0 && ts >= 0 && timestamp > 0 && !Number.isNaN(value);
    const k = this.push(start, fast, tags);
    if (fast) {
      const o = this.out;
      o.metricStart[k] = ms;
      o.metricEnd[k] = me;
      o.tagsStart[k] = ts;
      o.tagsEnd[k] = te;
      o.timestamp[k] = timestamp;
      o.value[k] = value;
      o.isInt[k] = isInt ? 1 : 0;
    }
  }

  /**
   * The tags object at `vs`, as tags() but faster when its bytes are those of the last tags
   * object scanned whole: clients send the points of a series (or of a host) together, so
   * most tags objects repeat the one before. Bytes equal to a complete object already
   * checked are that same object: the scan skips them (compared 8 bytes a step) and takes
   * the verdict it had.
   */
  private sameTagsAgain(vs: number): boolean {
    const n = this.lastTagsLength;
    if (n > 0 && vs + n <= this.b.length && rangeEqual(this.b, this.dv, this.lastTagsStart, this.b, this.dv, vs, n)) {
      this.i = vs + n;
      return this.lastTagsOk;
    }
    const ok = this.tags();
    this.tagsScanned++;
    this.lastTagsStart = vs;
    this.lastTagsLength = this.i - vs;
    this.lastTagsOk = ok;
    return ok;
  }

  /** A tags object; true when every key and value is a plain string (or a number) and there is at least one. */
  private tags(): boolean {
    const b = this.b;
    this.i++;
    this.ws();
    if (b[this.i] === 0x7d) {
      this.i++;
      return false;
    }
    let ok = true;
    for (;;) {
      this.ws();
      if (!this.string()) ok = false;
      this.ws();
      if (b[this.i++] !== 0x3a) throw MALFORMED;
      this.ws();
      const c = b[this.i];
      if (c === Q) {
        const vs = this.i;
        if (!this.string() || this.i - vs === 2) ok = false;
      } else {
        this.skipValue(2);
        ok = false;
      }
      this.ws();
      const d = b[this.i++];
      if (d === 0x7d) return ok;
      if (d !== 0x2c) throw MALFORMED;
    }
  }

  /** A JSON number or numeric string as a timestamp: positive integer digits only, else -1. */
  private timestampValue(): number {
    const b = this.b;
    const quoted = b[this.i] === Q;
    if (!quoted && b[this.i] !== 0x2d && (b[this.i]! < 0x30 || b[this.i]! > 0x39)) {
      this.skipValue(1);
      return -1;
    }
    if (quoted) {
      const vs = this.i + 1;
      if (!this.string()) return -1;
      return digitsValue(b, vs, this.i - 1);
    }
    const vs = this.i;
    this.number();
    return digitsValue(b, vs, this.i);
  }

  /** A JSON number or numeric string as a value (NaN when the fast path cannot take it). */
  private numberValue(): number {
    const b = this.b;
    if (b[this.i] === Q) {
      const vs = this.i + 1;
      if (!this.string()) return NaN;
      const end = parseNumber(b, vs, this.i - 1, this.num);
      return end === this.i - 1 && end > vs ? this.num.value : NaN;
    }
    if (b[this.i] !== 0x2d && (b[this.i]! < 0x30 || b[this.i]! > 0x39)) {
      this.skipValue(1);
      return NaN;
    }
    const vs = this.i;
    this.number();
    const end = parseNumber(b, vs, this.i, this.num);
    if (end !== this.i) return NaN;
    this.num.isInt = Number.isSafeInteger(this.num.value);
    return this.num.value;
  }

  /**
   * Skips a string; returns false when it holds escapes (its bytes are not its text). The
   * index stays in a local and a plain byte (above '"', not '\\') costs one test: this
   * loop is most of the scan.
   */
  private string(): boolean {
    const b = this.b;
    let i = this.i;
    if (b[i] !== Q) throw MALFORMED;
    i++;
    let clean = true;
    for (;;) {
      const c = b[i++]!;
      if (c > Q && c !== BS) continue;
      if (c === Q) {
        this.i = i;
        return clean;
      }
      if (c === undefined || c < 0x20) throw MALFORMED;
      if (c === BS) {
        clean = false;
        const e = b[i++];
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) if (!isHex(b[i++])) throw MALFORMED;
        } else if (e !== Q && e !== BS && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
          throw MALFORMED;
        }
      }
    }
  }

  /** Skips a number, checking JSON's grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
  private number(): void {
    const b = this.b;
    if (b[this.i] === 0x2d) this.i++;
    if (b[this.i] === 0x30) this.i++;
    else if (!this.digits()) throw MALFORMED;
    if (b[this.i] === 0x2e) {
      this.i++;
      if (!this.digits()) throw MALFORMED;
    }
    if (b[this.i] === 0x65 || b[this.i] === 0x45) {
      this.i++;
      if (b[this.i] === 0x2b || b[this.i] === 0x2d) this.i++;
      if (!this.digits()) throw MALFORMED;
    }
  }

  private digits(): boolean {
    const b = this.b;
    const start = this.i;
    let i = start;
    for (let c = b[i]; c !== undefined && c >= 0x30 && c <= 0x39; c = b[++i]);
    this.i = i;
    return i > start;
  }

  private skipValue(depth: number): void {
    if (depth > MAX_DEPTH) throw MALFORMED;
    const b = this.b;
    const c = b[this.i];
    if (c === Q) {
      this.string();
    } else if (c === 0x7b || c === 0x5b) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      this.i++;
      this.ws();
      if (b[this.i] === close) {
        this.i++;
        return;
      }
      for (;;) {
        this.ws();
        if (c === 0x7b) {
          this.string();
          this.ws();
          if (b[this.i++] !== 0x3a) throw MALFORMED;
          this.ws();
        }
        this.skipValue(depth + 1);
        this.ws();
        const d = b[this.i++];
        if (d === close) return;
        if (d !== 0x2c) throw MALFORMED;
      }
    } else if (c === 0x74) {
      this.literal('true');
    } else if (c === 0x66) {
      this.literal('false');
    } else if (c === 0x6e) {
      this.literal('null');
    } else {
      this.number();
    }
  }

  private literal(word: string): void {
    for (let k = 0; k < word.length; k++) if (this.b[this.i++] !== word.charCodeAt(k)) throw MALFORMED;
  }

  private ws(): void {
    const b = this.b;
    let i = this.i;
    while (isWs(b[i])) i++;
    this.i = i;
  }
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46));
}

/** The known key names by their bytes, without making a string. */
function keyOf(b: Uint8Array, s: number, e: number): string {
  const n = e - s;
  if (n === 6 && b[s] === 0x6d && b[s + 1] === 0x65 && b[s + 2] === 0x74 && b[s + 3] === 0x72 && b[s + 4] === 0x69 && b[s + 5] === 0x63) return 'metric';
  if (n === 9 && b[s] === 0x74 && b[s + 1] === 0x69 && b[s + 2] === 0x6d && b[s + 3] === 0x65 && b[s + 4] === 0x73 && b[s + 5] === 0x74
    && b[s + 6] === 0x61 && b[s + 7] === 0x6d && b[s + 8] === 0x70) return 'timestamp';
  if (n === 5 && b[s] === 0x76 && b[s + 1] === 0x61 && b[s + 2] === 0x6c && b[s + 3] === 0x75 && b[s + 4] === 0x65) return 'value';
  if (n === 4 && b[s] === 0x74 && b[s + 1] === 0x61 && b[s + 2] === 0x67 && b[s + 3] === 0x73) return 'tags';
  return '';
}


/** Digits only, 1..13 of them, as a positive timestamp; -1 otherwise. */
function digitsValue(b: Uint8Array, s: number, e: number): number {
  if (e - s < 1 || e - s > 13) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v > 0 && v <= MAX_MS_TIMESTAMP ? v : -1;
}
