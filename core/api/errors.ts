/**
 * Store errors: stable codes for callers to branch on, free-form messages for humans.
 * Every code is documented in core/ERRORS.md (a test keeps the two in sync).
 *
 * Programmer errors (wrong argument types, start > end, negative limits) are plain
 * TypeError/RangeError and should not be caught.
 */

export const STORE_ERROR_CODES = [
  'STORE_CLOSED',
  'STORE_NOT_SUPPORTED',
  'STORE_TABLE_NOT_FOUND',
  'STORE_TABLE_EXISTS',
  'STORE_FAMILY_NOT_FOUND',
  'STORE_INVALID_ARGUMENT',
  'STORE_CORRUPTION',
  'STORE_IO',
  'STORE_NO_SPACE',
  'STORE_ABORTED',
  'STORE_UNAVAILABLE',
  'STORE_TIMEOUT',
  'STORE_PARTIAL_WRITE',
] as const;

export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

export interface StoreErrorOptions {
  readonly cause?: unknown;
  /** True when the same call may succeed if retried unchanged. */
  readonly retryable?: boolean;
  /** STORE_PARTIAL_WRITE only: the row keys that were NOT applied; all others were. */
  readonly failedKeys?: readonly Uint8Array[];
}

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly retryable: boolean;
  readonly failedKeys: readonly Uint8Array[] | undefined;

  constructor(code: StoreErrorCode, message: string, options: StoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.failedKeys = options.failedKeys;
  }
}

export function isStoreError(err: unknown, code?: StoreErrorCode): err is StoreError {
  return err instanceof StoreError && (code === undefined || err.code === code);
}

/** Maps a Node.js system error from file I/O to a StoreError, keeping it as the cause. */
export function ioError(what: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const sys = err as { code?: string; message?: string };
  const detail = sys?.message ?? String(err);
  if (sys?.code === 'ENOSPC' || sys?.code === 'EDQUOT') {
    return new StoreError('STORE_NO_SPACE', `${what}: no space left on device (${detail})`, { cause: err, retryable: true });
  }
  return new StoreError('STORE_IO', `${what}: ${detail}`, { cause: err });
}

/** Throws STORE_ABORTED when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new StoreError('STORE_ABORTED', 'operation aborted', { cause: signal.reason });
  }
}
