/**
 * Retries with exponential backoff and full jitter, owned here rather than hidden in the
 * client library (its defaults are switched off call by call, see client.ts). Only calls
 * that are idempotent as sent (reads; mutations with client-side timestamps) go through
 * `withRetry`; ReadModifyWrite and CheckAndMutate are sent once.
 */
import { StoreError } from '../../../core/api/errors.js';
import { isTransient, storeErrorOf } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first included (>= 1). */
  readonly attempts: number;
  /** Delay cap of the first retry, in ms; doubles per retry up to maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 50, maxDelayMs: 2000 };

/** The delay before retry `n` (1-based): uniform in [0, min(max, base * 2^(n-1))]. */
export function backoffMs(policy: RetryPolicy, n: number, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
  return Math.floor(random() * cap);
}

/** Resolves after `ms`, or rejects with STORE_ABORTED when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new StoreError('STORE_ABORTED', 'operation aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new StoreError('STORE_ABORTED', 'operation aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt(n)` until it succeeds, fails with a non-transient error, or the policy's
 * attempts are spent; the last error is mapped with storeErrorOf(what, …). `attempt` gets
 * the attempt number so it can resume (a scan re-sends only what is left).
 */
export async function withRetry<T>(
  what: string,
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= policy.attempts || !isTransient(err) || err instanceof StoreError) throw storeErrorOf(what, err);
      await sleep(backoffMs(policy, n), signal);
    }
  }
}
