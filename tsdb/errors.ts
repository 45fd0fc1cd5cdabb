/**
 * Errors of the time-series layer: a stable code for callers and the HTTP status it maps
 * to, and a message worded as OpenTSDB words it where OpenTSDB has an equivalent (clients
 * and scripts match on those texts). Every code is listed in tsdb/ERRORS.md.
 */

export const TSDB_ERROR_CODES = {
  /** A data point or request field is malformed (bad name, tag, timestamp or value). */
  TSDB_ILLEGAL_ARGUMENT: 400,
  /** The value string of a data point is not a number. */
  TSDB_INVALID_VALUE: 400,
  /** A name has no UID and may not be created (auto-create is off, or a read). */
  TSDB_NO_SUCH_NAME: 400,
  /** Every id of a UID kind at its configured width is taken. */
  TSDB_UID_EXHAUSTED: 500,
  /** A UID exists in one direction only, or a stored UID row is malformed. */
  TSDB_UID_CORRUPT: 500,
  /** The request body is larger than the configured limit. */
  TSDB_TOO_LARGE: 413,
  /** The write pipeline is over its memory bound, or the heap over the memory budget; retry later. */
  TSDB_OVERLOADED: 503,
  /** A new series is past a cardinality limit (horae.limits.*); its points are refused. */
  TSDB_LIMIT_EXCEEDED: 429,
  /** The storage layer failed the write (I/O error, closed). */
  TSDB_STORAGE: 500,
  /** The storage layer is out of disk space: nothing of the write is acknowledged; retry once space is back. */
  TSDB_STORAGE_FULL: 503,
  /** Stored data cannot be decoded. */
  TSDB_ILLEGAL_DATA: 500,
} as const;

export type TsdbErrorCode = keyof typeof TSDB_ERROR_CODES;

export class TsdbError extends Error {
  readonly code: TsdbErrorCode;

  constructor(code: TsdbErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = 'TsdbError';
    this.code = code;
  }

  get status(): number {
    return TSDB_ERROR_CODES[this.code];
  }
}

export function isTsdbError(err: unknown, code?: TsdbErrorCode): err is TsdbError {
  return err instanceof TsdbError && (code === undefined || err.code === code);
}
