/**
 * Store timestamps are integer milliseconds in [0, 2^53); Bigtable's are int64
 * microseconds, and tables created here keep millisecond granularity (the default), so a
 * Store timestamp t is the Bigtable timestamp t * 1000. Products beyond 2^53 travel as
 * decimal strings (the protobuf int64 form the client accepts).
 */

/** The largest timestamp Bigtable stores: the last millisecond of year 9999 (ms). */
export const BIGTABLE_MAX_TIMESTAMP = 253_402_300_799_999;

/** t ms → µs as a decimal string. */
export function microsOf(ms: number): string {
  return ms < 9_007_199_254 ? String(ms * 1000) : (BigInt(ms) * 1000n).toString();
}

/** A protobuf int64 of µs (string, number or Long) → integer ms, rounded down. */
export function msFromMicros(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Math.floor(v / 1000);
  const s = String(v);
  if (s.length < 16) return Math.floor(Number(s) / 1000);
  return Number(BigInt(s) / 1000n);
}
