/**
 * gRPC status codes of Bigtable calls mapped to the Store's error codes (core/ERRORS.md),
 * and which of them are transient (worth a retry with backoff).
 */
import { StoreError } from '../../../core/api/errors.js';
import type { StoreErrorCode } from '../../../core/api/errors.js';

/** gRPC status codes (google.rpc.Code) used here. */
export const GRPC = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5,
  ALREADY_EXISTS: 6, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9,
  ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;

/** Codes after which the same request may succeed: Bigtable's own retry set. */
const TRANSIENT: ReadonlySet<number> = new Set([
  GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED, GRPC.ABORTED, GRPC.UNAVAILABLE,
]);

/** The gRPC code of an error from the client, or undefined when it has none. */
export function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** True when `err` carries a transient gRPC code (or is a RST_STREAM-style INTERNAL). */
export function isTransient(err: unknown): boolean {
  const code = grpcCode(err);
  if (code === undefined) return false;
  if (TRANSIENT.has(code)) return true;
  // Bigtable's documented retryable INTERNAL: a stream reset by the front end.
  return code === GRPC.INTERNAL && /RST_STREAM|rst stream|Received RST/i.test(messageOf(err));
}

function messageOf(err: unknown): string {
  const e = err as { details?: unknown; message?: unknown } | null;
  if (typeof e?.details === 'string' && e.details !== '') return e.details;
  return typeof e?.message === 'string' ? e.message : String(err);
}

/**
 * Maps a client error to a StoreError saying what failed (`what`, e.g. "read of table t").
 * StoreErrors pass through unchanged.
 */
export function storeErrorOf(what: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const code = grpcCode(err);
  const detail = messageOf(err);
  const make = (c: StoreErrorCode, retryable = false): StoreError =>
    new StoreError(c, `bigtable: ${what}: ${detail}`, { cause: err, retryable });
  switch (code) {
    case GRPC.NOT_FOUND: return make('STORE_TABLE_NOT_FOUND');
    case GRPC.ALREADY_EXISTS: return make('STORE_TABLE_EXISTS');
    case GRPC.INVALID_ARGUMENT:
    case GRPC.FAILED_PRECONDITION:
    case GRPC.OUT_OF_RANGE: return make('STORE_INVALID_ARGUMENT');
    case GRPC.DEADLINE_EXCEEDED: return make('STORE_TIMEOUT', true);
    case GRPC.UNAVAILABLE:
    case GRPC.RESOURCE_EXHAUSTED:
    case GRPC.ABORTED: return make('STORE_UNAVAILABLE', true);
    case GRPC.CANCELLED: return make('STORE_ABORTED');
    case GRPC.UNIMPLEMENTED: return make('STORE_NOT_SUPPORTED');
    case GRPC.DATA_LOSS: return make('STORE_CORRUPTION');
    default: return make('STORE_IO', isTransient(err));
  }
}
