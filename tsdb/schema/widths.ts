/**
 * Byte widths of the row key parts (tsdb/SCHEMA.md "Row key", "Salt"). Fixed for the life
 * of a data table: changing any of them after data exists makes every stored key unreadable
 * (OpenTSDB `tsd.storage.uid.width.*`, `tsd.storage.salt.*`).
 */

export interface SchemaWidths {
  /** Metric UID width in bytes, 1..8. OpenTSDB default 3. */
  readonly metric: number;
  /** Tag key UID width in bytes, 1..8. OpenTSDB default 3. */
  readonly tagk: number;
  /** Tag value UID width in bytes, 1..8. OpenTSDB default 3. */
  readonly tagv: number;
  /** Salt prefix width in bytes, 0..8; 0 turns salting off (the OpenTSDB default). */
  readonly saltWidth: number;
  /**
   * Number of salt buckets, at least 1; the largest bucket (buckets - 1) must fit in
   * `saltWidth` bytes. Ignored when `saltWidth` is 0. Changing it breaks direct gets by
   * TSUID but not scans, which cover every bucket.
   */
  readonly saltBuckets: number;
}

/**
 * Horae's defaults: 3-byte UIDs as in OpenTSDB, and salting ON with one byte and 20 buckets
 * (OpenTSDB ships with salting off), so that writes of one metric spread over 20 regions.
 */
export const DEFAULT_WIDTHS: SchemaWidths = Object.freeze({
  metric: 3,
  tagk: 3,
  tagv: 3,
  saltWidth: 1,
  saltBuckets: 20,
});

/** Java's Integer.MAX_VALUE: OpenTSDB keeps the bucket count in an int. */
const MAX_BUCKETS = 0x7fffffff;

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`schema widths: ${name} must be an integer in ${min}..${max}, got ${v}`);
  }
}

/** Throws RangeError naming the first invalid field; returns `w` for chaining. */
export function validateWidths(w: SchemaWidths): SchemaWidths {
  checkInt('metric', w.metric, 1, 8);
  checkInt('tagk', w.tagk, 1, 8);
  checkInt('tagv', w.tagv, 1, 8);
  checkInt('saltWidth', w.saltWidth, 0, 8);
  checkInt('saltBuckets', w.saltBuckets, 1, MAX_BUCKETS);
  if (w.saltWidth > 0 && w.saltWidth < 4 && w.saltBuckets - 1 >= 2 ** (8 * w.saltWidth)) {
    throw new RangeError(
      `schema widths: ${w.saltBuckets} salt buckets do not fit in ${w.saltWidth} salt byte(s) ` +
      `(at most ${2 ** (8 * w.saltWidth)})`,
    );
  }
  return w;
}
