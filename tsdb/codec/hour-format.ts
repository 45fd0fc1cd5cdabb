/**
 * Constants of the compressed hour cell: the on-disk values of versions, scheme ids and
 * limits. tsdb/SCHEMA.md is the specification; DO NOT CHANGE a value here
 * without a new format version there.
 */

/** Format version, in the high nibble of the first byte. */
export const HOUR_FORMAT_VERSION = 1;

/** Kind modes (bits 3..2 of the first byte). */
export const KIND_ALL_FLOAT = 0;
export const KIND_ALL_INT = 1;
export const KIND_MIXED = 2;

/** Bit 1 of the first byte: a big-integer side list follows the value chunks. */
export const FLAG_BIG_INTS = 0x02;

/** Bit 0 of the first byte: a summary (NaN count, sum) follows the point count. */
export const FLAG_SUMMARY = 0x01;

/**
 * The encoder writes a summary for cells of at least this many points: 9 bytes, at most
 * 0.07 bytes a point, where decoding the cell costs a query far more than reading them
 * (a 10 s or 15 s series fills 360 or 240 points an hour; a 1 min series, 60, gets none).
 * An encoder choice: readers take a summary wherever the flag says one is.
 */
export const SUMMARY_MIN_POINTS = 128;

/** Timestamp schemes. */
export const TS_REGULAR = 0;
export const TS_DOD = 1;
export const TS_GRID = 2;

/** Value chunk schemes. */
export const VAL_RAW = 0;
export const VAL_CONST = 1;
export const VAL_DECIMAL = 2;
export const VAL_FLOAT_DELTA = 3;
export const VAL_GORILLA = 4;

/** Points per value chunk (the last chunk holds the rest). */
export const VALUE_CHUNK = 1024;

/**
 * Rice escape: a quotient >= RICE_ESCAPE is written as RICE_ESCAPE zero bits followed by
 * the raw value (32 bits in timestamp streams, 64 in value streams). It bounds the unary
 * run, so one Math.clz32 over a window of >= 25 bits always decodes it.
 */
export const RICE_ESCAPE = 24;

/** The `k` byte meaning "every residual is zero; no bits follow". */
export const K_ALL_ZERO = 0xff;

/** Largest ms offset inside an hour, and the most points an hour can hold. */
export const MAX_OFFSET_MS = 3_599_999;
export const MAX_POINTS = 3_600_000;

/** Largest decimal scale (digits after the point) of the decimal scheme. */
export const MAX_DECIMALS = 15;
