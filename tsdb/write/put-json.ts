/**
 * The /api/put JSON body, read straight from its bytes: the one parser of it. One pass
 * checks the JSON grammar (RFC 8259, as JSON.parse: any nesting, strings of any bytes but
 * control characters) and records, for every datapoint, where its object is and where the
 * values of its `metric`, `timestamp`, `value` and `tags` keys are (the last of a key given
 * twice, as JSON.parse keeps it), with no object built.
 *
 * A datapoint of the common shape — a metric string without escapes, a tags object, a
 * timestamp of digits (a number or a string), a value that is a JSON number or a plain
 * numeric string — is read whole here: its metric and tags bytes (the series key, see
 * catalog/series-byte-cache.ts) and its numbers (`fast`). Any datapoint, that one too, is
 * made an IncomingPoint (or its OpenTSDB error) from the recorded places by
 * put-json-point.ts when its series must be named.
 *
 * A body that is not JSON, or not an object or array at the top, gets its error here
 * (`error`); OpenTSDB's texts.
 */
import { latin1Range } from '../../core/api/bytes.js';
import { rangeEqual } from '../catalog/series-byte-cache.js';
import { VALUE_OK, newNumberOut, readJsonNumber, readValue } from './number-text.js';

/**
 * The datapoints of a body in columns (typed arrays, possibly longer than `count`: read
 * only [0, count)). A datapoint's key values are byte ranges [start, end) of the value's
 * JSON text (a string's with its quotes), -1 when the key is absent. `kind[k]`: 0 not an
 * object, 1 an object, 2 an object read whole: then its timestamp, value and isInt are
 * its point's (not yet checked: validatePointValue).
 */
export interface JsonPutScan {
  count: number;
  /** The body's error (nothing of it is stored), or undefined. */
  error: string | undefined;
  objStart: Int32Array;
  objEnd: Int32Array;
  kind: Uint8Array;
  metricStart: Int32Array;
  metricEnd: Int32Array;
  timestampStart: Int32Array;
  timestampEnd: Int32Array;
  valueStart: Int32Array;
  valueEnd: Int32Array;
  tagsStart: Int32Array;
  tagsEnd: Int32Array;
  timestamp: Float64Array;
  value: Float64Array;
  isInt: Uint8Array;
  /**
   * 1 where this datapoint and the one before are both read whole and their tags objects
   * are the same bytes (SeriesByteCache.get's `tagsAsBefore`).
   */
  sameTags: Uint8Array;
}

export const NOT_OBJECT = 0;
export const OBJECT = 1;
export const READ_WHOLE = 2;

/** The body errors (status 400). */
export const BAD_JSON = 'Unable to parse the given JSON';
export const NOT_CONTAINER = 'The JSON must start as an object or an array';
export const NO_CONTENT = 'Missing request content';

/** The ArrayBuffers of a scan's columns (each its own), to transfer them to another thread. */
export function scanBuffers(s: JsonPutScan): ArrayBuffer[] {
  return [s.objStart, s.objEnd, s.kind, s.metricStart, s.metricEnd, s.timestampStart, s.timestampEnd, s.valueStart, s.valueEnd, s.tagsStart, s.tagsEnd,
    s.timestamp, s.value, s.isInt, s.sameTags].map((a) => a.buffer as ArrayBuffer);
}

/** Columns for about `n` datapoints (a literal: one shape for every scan). */
function newScan(n: number): JsonPutScan {
  return {
    count: 0, error: undefined,
    objStart: new Int32Array(n), objEnd: new Int32Array(n), kind: new Uint8Array(n),
    metricStart: new Int32Array(n), metricEnd: new Int32Array(n), timestampStart: new Int32Array(n), timestampEnd: new Int32Array(n),
    valueStart: new Int32Array(n), valueEnd: new Int32Array(n), tagsStart: new Int32Array(n), tagsEnd: new Int32Array(n),
    timestamp: new Float64Array(n), value: new Float64Array(n), isInt: new Uint8Array(n), sameTags: new Uint8Array(n),
  };
}

/** The columns copied into ones twice as long. */
function grownScan(o: JsonPutScan): JsonPutScan {
  const g = newScan(o.objStart.length * 2);
  g.count = o.count;
  g.objStart.set(o.objStart); g.objEnd.set(o.objEnd); g.kind.set(o.kind);
  g.metricStart.set(o.metricStart); g.metricEnd.set(o.metricEnd); g.timestampStart.set(o.timestampStart); g.timestampEnd.set(o.timestampEnd);
  g.valueStart.set(o.valueStart); g.valueEnd.set(o.valueEnd); g.tagsStart.set(o.tagsStart); g.tagsEnd.set(o.tagsEnd);
  g.timestamp.set(o.timestamp); g.value.set(o.value); g.isInt.set(o.isInt); g.sameTags.set(o.sameTags);
  return g;
}

/** The columns of a Scanner that reads no datapoints (members). */
const NO_COLUMNS = newScan(0);

/** Body bytes per datapoint assumed when sizing the columns (a devops point with 8 tags is ~230). */
const BYTES_PER_POINT_GUESS = 128;

const Q = 0x22;
const BS = 0x5c;
const NULL = 0x6e;

function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

class Malformed extends Error {}
const MALFORMED = new Malformed('malformed');

/** Reads `b`: its datapoints, or its error. */
export function scanPutJson(b: Uint8Array): JsonPutScan {
  const s = new Scanner(b, Math.max(16, Math.ceil(b.length / BYTES_PER_POINT_GUESS)));
  try {
    return s.body();
  } catch (e) {
    if (!(e instanceof Malformed)) throw e;
    const out = newScan(0);
    out.error = BAD_JSON;
    return out;
  }
}

class Scanner {
  private readonly b: Uint8Array;
  private i = 0;
  private readonly dv: DataView;
  private readonly num = newNumberOut();
  private out: JsonPutScan;
  /** The open containers of skipValue ('{' or '['), deepest last. */
  private stack = new Uint8Array(64);
  /** The last tags object scanned: where it starts and its length. */
  private lastTagsStart = 0;
  private lastTagsLength = 0;
  /** Tags objects scanned so far: equal numbers mean equal tags bytes. */
  private tagsScanned = 0;
  /** tagsScanned as of the previous datapoint's tags, when it was read whole; else -1. */
  private prevWholeTags = -1;

  /** `columns`: datapoints to size the columns for. */
  constructor(b: Uint8Array, columns: number) {
    this.b = b;
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.out = columns > 0 ? newScan(columns) : NO_COLUMNS;
  }

  /**
   * The members of the object at `at` (scanned before: well-formed), flat: each key's
   * bytes inside its quotes, then its value's range.
   */
  members(at: number): number[] {
    const b = this.b;
    const out: number[] = [];
    this.i = at + 1;
    this.ws();
    if (b[this.i] === 0x7d) return out;
    for (;;) {
      this.ws();
      const ks = this.i + 1;
      this.string();
      const ke = this.i - 1;
      this.ws();
      this.i++; // ':'
      this.ws();
      const vs = this.i;
      this.skipValue();
      out.push(ks, ke, vs, this.i);
      this.ws();
      if (b[this.i++] === 0x7d) return out;
    }
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
      this.skipValue();
      this.ws();
      if (this.i !== this.b.length) throw MALFORMED;
      const out = newScan(0);
      out.error = c === NULL ? NO_CONTENT : NOT_CONTAINER;
      return out;
    }
    this.ws();
    if (this.i !== this.b.length) throw MALFORMED;
    return this.out;
  }

  /** An array element that is not an object. */
  private other(): void {
    const start = this.i;
    this.skipValue();
    this.places(this.push(start, NOT_OBJECT), -1, -1, -1, -1, -1, -1, -1, -1);
  }

  /** `tags`: tagsScanned as of this datapoint's tags object (read whole ones). */
  private push(start: number, kind: number, tags = -1): number {
    if (this.out.count === this.out.objStart.length) this.out = grownScan(this.out);
    const o = this.out;
    const k = o.count++;
    o.objStart[k] = start;
    o.objEnd[k] = this.i;
    o.kind[k] = kind;
    const whole = kind === READ_WHOLE;
    o.sameTags[k] = whole && tags >= 0 && tags === this.prevWholeTags ? 1 : 0;
    this.prevWholeTags = whole ? tags : -1;
    return k;
  }

  /** Datapoint k's key values: where each is, -1 for none. */
  private places(k: number, ms: number, me: number, t0: number, t1: number, v0: number, v1: number, g0: number, g1: number): void {
    const o = this.out;
    o.metricStart[k] = ms;
    o.metricEnd[k] = me;
    o.timestampStart[k] = t0;
    o.timestampEnd[k] = t1;
    o.valueStart[k] = v0;
    o.valueEnd[k] = v1;
    o.tagsStart[k] = g0;
    o.tagsEnd[k] = g1;
  }

  private datapoint(): void {
    const b = this.b;
    const start = this.i++;
    let ms = -1;
    let me = -1;
    let metricClean = false;
    let t0 = -1;
    let t1 = -1;
    let timestamp = -1;
    let v0 = -1;
    let v1 = -1;
    let value = NaN;
    let isInt = false;
    let valueRead = false;
    let g0 = -1;
    let g1 = -1;
    let tags = -1;
    this.ws();
    if (b[this.i] === 0x7d) {
      this.i++;
      this.places(this.push(start, OBJECT), -1, -1, -1, -1, -1, -1, -1, -1);
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
      const key = clean ? keyOf(b, ks, ke) : keyOfText(b, ks, ke);
      const vs = this.i;
      if (key === 'metric') {
        if (b[vs] === Q) metricClean = this.string();
        else {
          metricClean = false;
          this.skipValue();
        }
        ms = vs;
        me = this.i;
      } else if (key === 'timestamp') {
        timestamp = this.timestampValue();
        t0 = vs;
        t1 = this.i;
      } else if (key === 'value') {
        valueRead = this.numberValue();
        value = this.num.value;
        isInt = this.num.isInt;
        v0 = vs;
        v1 = this.i;
      } else if (key === 'tags') {
        if (b[vs] === 0x7b) {
          this.tagsObject(vs);
          tags = this.tagsScanned;
        } else {
          this.skipValue();
          tags = -1;
        }
        g0 = vs;
        g1 = this.i;
      } else {
        this.skipValue();
      }
      this.ws();
      const d = b[this.i++];
      if (d === 0x7d) break;
      if (d !== 0x2c) throw MALFORMED;
    }
    const whole = metricClean && me - ms > 2 && tags >= 0 && timestamp >= 0 && valueRead;
    const k = this.push(start, whole ? READ_WHOLE : OBJECT, tags);
    this.places(k, ms, me, t0, t1, v0, v1, g0, g1);
    const o = this.out;
    if (whole) {
      o.timestamp[k] = timestamp;
      o.value[k] = value;
      o.isInt[k] = isInt ? 1 : 0;
    }
  }

  /**
   * A tags object at `vs`, skipped faster when its bytes are those of the last tags object
   * scanned: clients send the points of a series (or of a host) together, so most tags
   * objects repeat the one before. Bytes equal to a complete object already checked are
   * that same object: the scan skips them (compared 8 bytes a step).
   */
  private tagsObject(vs: number): void {
    const n = this.lastTagsLength;
    if (n > 0 && vs + n <= this.b.length && rangeEqual(this.b, this.dv, this.lastTagsStart, this.b, this.dv, vs, n)) {
      this.i = vs + n;
      return;
    }
    this.skipObject();
    this.tagsScanned++;
    this.lastTagsStart = vs;
    this.lastTagsLength = this.i - vs;
  }

  /** A timestamp of digits, as a number or a string without escapes (at most 15: exact): its value, else -1. */
  private timestampValue(): number {
    const b = this.b;
    const quoted = b[this.i] === Q;
    const vs = this.i + (quoted ? 1 : 0);
    if (quoted ? !this.string() : !this.skipValue()) return -1;
    const e = this.i - (quoted ? 1 : 0);
    if (e - vs < 1 || e - vs > 15) return -1;
    let v = 0;
    for (let i = vs; i < e; i++) {
      const c = b[i]!;
      if (c < 0x30 || c > 0x39) return -1;
      v = v * 10 + (c - 0x30);
    }
    return v;
  }

  /**
   * A value read into this.num: a JSON number, or a string of ASCII bytes without escapes
   * or blanks at its ends that is a value's text. False for anything else.
   */
  private numberValue(): boolean {
    const b = this.b;
    const vs = this.i;
    if (b[vs] === Q) {
      if (!this.string()) return false;
      const s = vs + 1;
      const e = this.i - 1;
      if (e <= s || b[s]! <= 0x20 || b[e - 1]! <= 0x20) return false;
      for (let k = s; k < e; k++) if (b[k]! >= 0x80) return false;
      // An exact long beyond 2^53 has no column here: it is named.
      return readValue(b, s, e, this.num) === VALUE_OK && this.num.big === undefined;
    }
    if (!this.skipValue()) return false;
    readJsonNumber(b, vs, this.i, this.num);
    return true;
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
    while (isDigit(b[i])) i++;
    this.i = i;
    return i > start;
  }

  /** Skips the object at the index, its string values in this loop (a tags object's are). */
  private skipObject(): void {
    const b = this.b;
    this.i++;
    this.ws();
    if (b[this.i] === 0x7d) {
      this.i++;
      return;
    }
    for (;;) {
      this.member();
      if (b[this.i] === Q) this.string();
      else this.skipValue();
      this.ws();
      const d = b[this.i++];
      if (d === 0x7d) return;
      if (d !== 0x2c) throw MALFORMED;
    }
  }

  /** Skips one JSON value of any depth (no recursion); true when it was a number. */
  private skipValue(): boolean {
    const b = this.b;
    const c0 = b[this.i];
    if (c0 === 0x2d || isDigit(c0)) {
      this.number();
      return true;
    }
    let depth = 0;
    for (;;) {
      // A value.
      const c = b[this.i];
      if (c === 0x7b || c === 0x5b) {
        this.i++;
        this.ws();
        const close = c === 0x7b ? 0x7d : 0x5d;
        if (b[this.i] === close) {
          this.i++;
        } else {
          if (depth === this.stack.length) {
            const grown = new Uint8Array(depth * 2);
            grown.set(this.stack);
            this.stack = grown;
          }
          this.stack[depth++] = c;
          if (c === 0x7b) this.member();
          continue;
        }
      } else if (c === Q) {
        this.string();
      } else if (c === 0x74) {
        this.literal('true');
      } else if (c === 0x66) {
        this.literal('false');
      } else if (c === NULL) {
        this.literal('null');
      } else {
        this.number();
        if (depth === 0) return true;
      }
      // After a value: close what ends here, or go on to the next element.
      for (;;) {
        if (depth === 0) return false;
        this.ws();
        const open = this.stack[depth - 1]!;
        const d = b[this.i++];
        if (d === (open === 0x7b ? 0x7d : 0x5d)) {
          depth--;
          continue;
        }
        if (d !== 0x2c) throw MALFORMED;
        this.ws();
        if (open === 0x7b) this.member();
        break;
      }
    }
  }

  /** An object member's key and colon; the index is then at its value. */
  private member(): void {
    this.ws();
    this.string();
    this.ws();
    if (this.b[this.i++] !== 0x3a) throw MALFORMED;
    this.ws();
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

/** objectMembers: the members of the well-formed object at b[at] (Scanner.members). */
export function objectMembers(b: Uint8Array, at: number): number[] {
  return new Scanner(b, 0).members(at);
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

/** A key written with escapes (`"met\u0072ic"` is `metric`). */
function keyOfText(b: Uint8Array, s: number, e: number): string {
  return jsonStringText(b, s, e);
}

/**
 * The text of a JSON string's bytes b[s, e) (inside its quotes, grammar already checked):
 * UTF-8 between the escapes (invalid bytes as U+FFFD, as Buffer decodes a body), each
 * escape its UTF-16 unit.
 */
export function jsonStringText(b: Uint8Array, s: number, e: number): string {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let out = '';
  let run = s;
  for (let i = s; i < e; i++) {
    if (b[i] !== BS) continue;
    if (i > run) out += buf.toString('utf8', run, i);
    const c = b[i + 1]!;
    switch (c) {
      case 0x75: out += String.fromCharCode(parseInt(latin1Range(b, i + 2, i + 6), 16)); i += 4; break;
      case 0x62: out += '\b'; break;
      case 0x66: out += '\f'; break;
      case 0x6e: out += '\n'; break;
      case 0x72: out += '\r'; break;
      case 0x74: out += '\t'; break;
      default: out += String.fromCharCode(c); // " \ /
    }
    i++;
    run = i + 1;
  }
  if (e > run) out += buf.toString('utf8', run, e);
  return out;
}
