import { describe, expect, it } from 'vitest';
import { isAbort, LatestRequest } from '../../ui/src/lib/latest-request.js';

/** A request that resolves with `value` when `release()` is called, or rejects on abort. */
function deferred<T>(value: T): { fn: (signal: AbortSignal) => Promise<T>; release: () => void; signal?: AbortSignal } {
  let release = (): void => undefined;
  const d: { fn: (signal: AbortSignal) => Promise<T>; release: () => void; signal?: AbortSignal } = {
    fn: (signal) => {
      d.signal = signal;
      return new Promise<T>((resolve, reject) => {
        release = () => resolve(value);
        signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    },
    release: () => release(),
  };
  return d;
}

describe('LatestRequest', () => {
  it('aborts the superseded request and delivers only the newest answer', async () => {
    const l = new LatestRequest();
    const a = deferred('old');
    const b = deferred('new');
    const pa = l.run(a.fn);
    expect(l.inFlight).toBe(true);
    const pb = l.run(b.fn);
    expect(a.signal?.aborted).toBe(true);
    expect(b.signal?.aborted).toBe(false);
    await expect(pa).rejects.toSatisfy(isAbort);
    b.release();
    await expect(pb).resolves.toBe('new');
    expect(l.inFlight).toBe(false);
  });

  it('turns an answer that lands after being superseded into an abort', async () => {
    const l = new LatestRequest();
    let resolveOld: (v: string) => void = () => undefined;
    const old = l.run(() => new Promise<string>((r) => (resolveOld = r)));
    const fresh = l.run(async () => 'fresh');
    resolveOld('stale');
    await expect(old).rejects.toSatisfy(isAbort);
    await expect(fresh).resolves.toBe('fresh');
  });

  it('passes real failures through and cancels on demand', async () => {
    const l = new LatestRequest();
    await expect(l.run(async () => Promise.reject(new Error('HTTP 500')))).rejects.toThrow('HTTP 500');
    const c = deferred(1);
    const p = l.run(c.fn);
    l.cancel();
    await expect(p).rejects.toSatisfy(isAbort);
    expect(l.inFlight).toBe(false);
    expect(isAbort(new Error('x'))).toBe(false);
  });
});
