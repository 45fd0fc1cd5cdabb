/**
 * Errors of the time-series schema codecs (tsdb/SCHEMA.md).
 *
 * - `IllegalDataError`: bytes read from the store do not decode (a value length the flags
 *   do not allow, a compacted column whose values do not add up, a row key of the wrong
 *   length). OpenTSDB's `IllegalDataException`. The message names what was expected and
 *   what was found, with the offending bytes in hex.
 * - `InvalidInputError`: text from a client (a value string, a TSUID) that the put or
 *   query path must reject; the HTTP layer maps it to 400.
 *
 * Wrong arguments from our own code (a metric UID of the wrong width, an unaligned base
 * time) are plain RangeError/TypeError and are not meant to be caught.
 */

export class IllegalDataError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IllegalDataError';
  }
}

export class InvalidInputError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InvalidInputError';
  }
}
