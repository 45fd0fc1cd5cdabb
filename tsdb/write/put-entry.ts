/**
 * The one ingest entry (Ingestor.put): every protocol — telnet, HTTP JSON and msgpack,
 * `horae import`, and whichever comes next — hands its points over as a PointSource and
 * gets one outcome per point back. The loop over known series exists once, here and in
 * Ingestor.put: a point the protocol can scan from its bytes (metric and tag byte ranges,
 * timestamp, value) whose series bytes the protocol's byte cache knows (the catalog's,
 * catalog/series-byte-cache.ts) joins the columnar batch of resolved series
 * (KnownSeriesPoints: entries and Float64Array timestamps and values) without a string or
 * an object; every other point is parsed in full (an IncomingPoint with its series text)
 * and resolved by name, and once written teaches the byte cache its bytes.
 *
 * A new protocol implements `scan` (or answers false: it then pays a parse per point) and
 * `parse`, with its own error messages; it writes no loop of its own.
 */
import type { TsdbError } from '../errors.js';
import { MAX_MS_TIMESTAMP } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import type { SeriesEntry } from './write-group.js';

/** A point's outcome: undefined when stored, else the error that rejected it. */
export type PointOutcome = TsdbError | undefined;

/**
 * A point scanned from its bytes: where its series bytes are (its metric, its tags), and
 * its numbers as the protocol's parser read them (not yet checked: a timestamp out of
 * range, a value not finite or an integer beyond 2^53 take the named path, whose check
 * gives OpenTSDB's message).
 */
export interface ScannedPoint {
  /** The bytes the ranges point into (a telnet chunk, a JSON body). */
  buf: Uint8Array;
  metricStart: number;
  metricEnd: number;
  tagsStart: number;
  tagsEnd: number;
  timestamp: number;
  value: number;
  isInt: boolean;
  /** The exact integer when |value| > 2^53 − 1. */
  big: bigint | undefined;
  /** The tag bytes equal those of the previous point scanned (SeriesByteCache.get's hint). */
  sameTags: boolean;
}

export function newScannedPoint(): ScannedPoint {
  return { buf: EMPTY, metricStart: 0, metricEnd: 0, tagsStart: 0, tagsEnd: 0, timestamp: 0, value: 0, isInt: false, big: undefined, sameTags: false };
}

/** A scanned point the known-series path may write as it is (validatePointValue would pass it; no exact long to keep). */
export function writableAsScanned(p: ScannedPoint): boolean {
  return p.big === undefined && p.timestamp > 0 && p.timestamp <= MAX_MS_TIMESTAMP && Number.isFinite(p.value);
}

const EMPTY = new Uint8Array(0);

/** A protocol's batch of points, as Ingestor.put reads it. */
export interface PointSource {
  readonly count: number;
  /**
   * The protocol's byte-cache name (its own key space: the same series has other bytes
   * in another protocol), or undefined when its points have no byte form.
   */
  readonly protocol: string | undefined;
  /**
   * Point i read from its bytes into `out` (a series' metric and tag ranges, its time and
   * value) by the protocol's one parser, without validating names: true when it could be,
   * false when it has no byte form or is bad (`parse` then says why). Only asked when
   * `protocol` is set.
   */
  scan(i: number, out: ScannedPoint): boolean;
  /** Point i in full; throws TsdbError with the protocol's message when it is bad. */
  parse(i: number): IncomingPoint;
}

/** Points already parsed (import, tests): no byte form. */
export function pointsOf(points: readonly IncomingPoint[]): PointSource {
  return { count: points.length, protocol: undefined, scan: () => false, parse: (i) => points[i]! };
}

/**
 * Points whose series the caller already resolved (scanned points the byte cache knew),
 * validated, in columns sized for the call (no growth, no object per point), and where
 * they fall among the call's other points: known point i comes after `generalBefore[i]`
 * of them, so the call's points join the group in the order they came (the later of two
 * points with one series and timestamp wins).
 */
export class KnownSeriesPoints {
  count = 0;
  readonly entries: SeriesEntry[];
  readonly timestamps: Float64Array;
  readonly values: Float64Array;
  readonly ints: Uint8Array;
  readonly generalBefore: Int32Array;

  /** `capacity`: the most points add() will be called with. */
  constructor(capacity: number) {
    this.entries = new Array<SeriesEntry>(capacity);
    this.timestamps = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.ints = new Uint8Array(capacity);
    this.generalBefore = new Int32Array(capacity);
  }

  /** The most points add() may be called with. */
  get capacity(): number {
    return this.timestamps.length;
  }

  /**
   * One for `n` points: a pooled one when one is free and big enough (its columns sized to
   * a power of two, so a few sizes serve every call). Give it back with release() once the
   * write call it went to has settled: the Ingestor may read it until then. A telnet batch
   * or a JSON body made ~80 KB of columns per call before; a busy server made hundreds a second.
   */
  static take(n: number): KnownSeriesPoints {
    for (let i = knownPool.length - 1; i >= 0; i--) {
      const k = knownPool[i]!;
      if (k.capacity >= n) {
        knownPool[i] = knownPool[knownPool.length - 1]!;
        knownPool.pop();
        return k;
      }
    }
    let cap = KNOWN_MIN_CAPACITY;
    while (cap < n) cap *= 2;
    return new KnownSeriesPoints(cap);
  }

  /** Back to the pool (see take); it must not be used after. */
  release(): void {
    this.entries.fill(undefined as unknown as SeriesEntry, 0, this.count);
    this.count = 0;
    if (knownPool.length < KNOWN_POOL_MAX && this.capacity <= KNOWN_POOL_MAX_CAPACITY) knownPool.push(this);
  }

  /** A point of series `e`, after `generalBefore` of the call's other points. */
  add(e: SeriesEntry, timestamp: number, value: number, isInt: boolean, generalBefore: number): void {
    const i = this.count++;
    this.entries[i] = e;
    this.timestamps[i] = timestamp;
    this.values[i] = value;
    this.ints[i] = isInt ? 1 : 0;
    this.generalBefore[i] = generalBefore;
  }
}

/** Free KnownSeriesPoints (take/release): a few per connection's batches in flight. */
const knownPool: KnownSeriesPoints[] = [];
const KNOWN_POOL_MAX = 16;
const KNOWN_MIN_CAPACITY = 1024;
/** Bigger ones (a huge /api/put body) are not kept. */
const KNOWN_POOL_MAX_CAPACITY = 1 << 16;
