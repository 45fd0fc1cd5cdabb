/**
 * HourCodecError: a compressed hour cell (tsdb/SCHEMA.md) that cannot be
 * decoded: truncated, a reserved scheme or version, a field out of range, timestamps that
 * are not strictly ascending inside the hour, or trailing bytes. Decoders throw it instead
 * of reading out of bounds or looping; callers map it to their corruption error.
 *
 * Bad arguments to the encoder (offsets out of order, count past the arrays) are
 * programmer errors and throw RangeError, as elsewhere in the code base.
 */
export class HourCodecError extends Error {
  /** Byte position in the cell where the problem was found (-1 when not known). */
  readonly offset: number;

  constructor(message: string, offset = -1) {
    super(offset >= 0 ? `hour cell: ${message} (at byte ${offset})` : `hour cell: ${message}`);
    this.name = 'HourCodecError';
    this.offset = offset;
  }
}

export function isHourCodecError(err: unknown): err is HourCodecError {
  return err instanceof HourCodecError;
}
