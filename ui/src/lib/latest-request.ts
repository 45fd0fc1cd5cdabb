/**
 * Only the latest request counts: starting a new one aborts the one still in flight, so a
 * slow answer to an old query can never overwrite the chart of a newer one. Each call gets
 * its own AbortSignal; a superseded call rejects with an AbortError (isAbort() tells it
 * from a real failure). Works in browsers and in Node (unit-tested there).
 */

export class LatestRequest {
  #current: AbortController | undefined;

  /** Aborts the request in flight (if any) and runs `fn` with a fresh signal. */
  run<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.#current?.abort();
    const ac = new AbortController();
    this.#current = ac;
    const settle = (): void => {
      if (this.#current === ac) this.#current = undefined;
    };
    return fn(ac.signal).then(
      (v) => {
        settle();
        if (ac.signal.aborted) throw abortError();
        return v;
      },
      (err: unknown) => {
        settle();
        if (ac.signal.aborted) throw abortError();
        throw err;
      },
    );
  }

  /** True while the latest request has neither settled nor been cancelled. */
  get inFlight(): boolean {
    return this.#current !== undefined;
  }

  /** Aborts whatever is in flight. */
  cancel(): void {
    this.#current?.abort();
    this.#current = undefined;
  }
}

function abortError(): Error {
  const e = new Error('superseded by a newer request');
  e.name = 'AbortError';
  return e;
}

export function isAbort(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'AbortError';
}
