/**
 * Retries owned by the backend, with faults injected between it and the emulator (a
 * Connection that fails calls the way a flaky network or an overloaded tablet would):
 * a scan cut mid-stream resumes after its last row; MutateRows re-sends only the entries
 * that failed with a transient status; permanent failures surface as STORE_PARTIAL_WRITE
 * naming the rows; non-transient errors are not retried; attempts are bounded.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { isStoreError } from '../../core/api/errors.js';
import type { Store, Table } from '../../core/api/store.js';
import { Connection } from '../../backends/bigtable/src/client.js';
import type { IMutateRowsRequest, IMutateRowsResponse, IReadRowsRequest, IReadRowsResponse } from '../../backends/bigtable/src/client.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;
const grpcError = (code: number, msg: string): Error => Object.assign(new Error(msg), { code, details: msg });

/** A connection whose next calls fail as scripted. */
class FaultyConnection extends Connection {
  readRequests: IReadRowsRequest[] = [];
  mutateRequests: IMutateRowsRequest[] = [];
  /** Per ReadRows call (in order): fail with this code after this many response messages. */
  readFaults: { afterMessages: number; code: number }[] = [];
  /** Per MutateRows call (in order): entry indexes to answer with this code, unsent. */
  mutateFaults: { entries: (i: number) => boolean; code: number }[] = [];

  constructor() {
    super({ projectId: 'horae-test', instanceId: 'test' });
  }

  override readRows(req: IReadRowsRequest, onResponse: (r: IReadRowsResponse) => void, signal?: AbortSignal): Promise<void> {
    this.readRequests.push(req);
    const fault = this.readFaults.shift();
    if (fault === undefined) return super.readRows(req, onResponse, signal);
    let n = 0;
    return super.readRows(req, (r) => {
      if (n++ === fault.afterMessages) throw grpcError(fault.code, 'injected: stream broken');
      onResponse(r);
    }, signal).then(() => {
      if (n <= fault.afterMessages) throw grpcError(fault.code, 'injected: stream broken');
    });
  }

  override async mutateRows(req: IMutateRowsRequest, onResponse: (r: IMutateRowsResponse) => void): Promise<void> {
    this.mutateRequests.push(req);
    const fault = this.mutateFaults.shift();
    if (fault === undefined) return super.mutateRows(req, onResponse);
    const entries = req.entries ?? [];
    const sent = entries.map((_, i) => i).filter((i) => !fault.entries(i));
    await super.mutateRows({ ...req, entries: sent.map((i) => entries[i]!) }, (r) => {
      onResponse({ entries: (r.entries ?? []).map((e) => ({ ...e, index: sent[Number(e.index)]! })) });
    });
    onResponse({ entries: entries.map((_, i) => i).filter(fault.entries).map((i) => ({ index: i, status: { code: fault.code, message: 'injected' } })) });
  }
}

async function withStore(fn: (store: Store, conn: FaultyConnection, t: Table) => Promise<void>): Promise<void> {
  const conn = new FaultyConnection();
  const store = await openTestStore(freshPrefix(), { connection: conn, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  try {
    const t = await store.createTable({ name: 't', families: [{ name: 'cf' }] });
    await fn(store, conn, t);
  } finally {
    await store.close();
  }
}

const key = (i: number): Uint8Array => utf8(`k${String(i).padStart(4, '0')}`);
const rowsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ key: key(i), mutations: [{ type: 'put' as const, family: 'cf', qualifier: utf8('q'), value: utf8(`v${i}`) }] }));

async function scanKeys(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const b of t.scan({ batchRows: 100 })) out.push(...b.map((r) => fromUtf8(r.key)));
  return out;
}

describe('bigtable backend retries (faults injected)', () => {
  it('a scan cut mid-stream by UNAVAILABLE resumes after its last row: every row once, in order', async () => {
    await withStore(async (_s, conn, t) => {
      await t.mutate(rowsOf(300));
      conn.readRequests = [];
      conn.readFaults = [{ afterMessages: 5, code: UNAVAILABLE }, { afterMessages: 3, code: UNAVAILABLE }];
      const keys = await scanKeys(t);
      expect(keys).toEqual(rowsOf(300).map((r) => fromUtf8(r.key)));
      expect(conn.readRequests.length).toBeGreaterThanOrEqual(3);
      // The retries start after the last row received, not from the beginning.
      const resumed = conn.readRequests.slice(1).map((r) => r.rows?.rowRanges?.[0]?.startKeyOpen);
      for (const k of resumed) expect(k).toBeDefined();
      expect(Number(conn.readRequests[1]!.rowsLimit)).toBeLessThan(Number(conn.readRequests[0]!.rowsLimit));
    });
  });

  it('a non-transient read error is not retried and maps to a Store code', async () => {
    await withStore(async (_s, conn, t) => {
      await t.mutate(rowsOf(10));
      conn.readRequests = [];
      conn.readFaults = [{ afterMessages: 0, code: INVALID_ARGUMENT }];
      const err = await scanKeys(t).catch((e: unknown) => e);
      expect(isStoreError(err, 'STORE_INVALID_ARGUMENT')).toBe(true);
      expect(conn.readRequests).toHaveLength(1);
    });
  });

  it('attempts are bounded: a read that keeps failing ends with STORE_UNAVAILABLE (retryable)', async () => {
    await withStore(async (_s, conn, t) => {
      conn.readRequests = [];
      conn.readFaults = Array.from({ length: 10 }, () => ({ afterMessages: 0, code: UNAVAILABLE }));
      const err = await t.get([key(1)]).catch((e: unknown) => e);
      expect(isStoreError(err, 'STORE_UNAVAILABLE')).toBe(true);
      expect((err as { retryable: boolean }).retryable).toBe(true);
      expect(conn.readRequests).toHaveLength(6);
    });
  });

  it('MutateRows re-sends only the entries that failed transiently', async () => {
    await withStore(async (_s, conn, t) => {
      conn.mutateRequests = [];
      conn.mutateFaults = [{ entries: (i) => i % 3 === 0, code: UNAVAILABLE }, { entries: (i) => i === 0, code: UNAVAILABLE }];
      await t.mutate(rowsOf(90));
      expect(conn.mutateRequests.map((r) => r.entries?.length)).toEqual([90, 30, 1]);
      expect(await scanKeys(t)).toHaveLength(90);
    });
  });

  it('entries failing permanently: STORE_PARTIAL_WRITE names exactly those rows; the others are written', async () => {
    await withStore(async (_s, conn, t) => {
      conn.mutateFaults = [{ entries: (i) => i === 4 || i === 7, code: INVALID_ARGUMENT }];
      const err = await t.mutate(rowsOf(10)).catch((e: unknown) => e);
      expect(isStoreError(err, 'STORE_PARTIAL_WRITE')).toBe(true);
      expect((err as { failedKeys: Uint8Array[] }).failedKeys.map(fromUtf8)).toEqual(['k0004', 'k0007']);
      expect(await scanKeys(t)).toEqual(rowsOf(10).map((r) => fromUtf8(r.key)).filter((k) => k !== 'k0004' && k !== 'k0007'));
    });
  });

  it('chunks MutateRows under the mutation limit', async () => {
    const conn = new FaultyConnection();
    const store = await openTestStore(freshPrefix(), { connection: conn, limits: { maxMutationsPerRequest: 25, parallelRequests: 2 } });
    try {
      const t = await store.createTable({ name: 't', families: [{ name: 'cf' }] });
      conn.mutateRequests = [];
      await t.mutate(rowsOf(110));
      expect(conn.mutateRequests.map((r) => r.entries?.length).sort()).toEqual([10, 25, 25, 25, 25]);
      expect(await scanKeys(t)).toHaveLength(110);
    } finally {
      await store.close();
    }
  });
});
