/**
 * Reverse scans on the backend's code path for servers that serve reversed reads (Cloud
 * Bigtable does; neither emulator does): a Connection that answers a reversed ReadRows the
 * way Bigtable does (rows of the range in descending key order, at most rowsLimit), built
 * from a forward read, under the contract's scan and filter sections with reverseScan on.
 * This checks the backend's reversed paging (each page ends before the last row seen).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../core/api/bytes.js';
import { Connection } from '../../backends/bigtable/src/client.js';
import type { IReadRowsRequest, IReadRowsResponse } from '../../backends/bigtable/src/client.js';
import { bigtableCapabilities } from '../../backends/bigtable/src/index.js';
import { ContractContext } from '../contract/contract-harness.js';
import { filterContract } from '../contract/contract-filters.js';
import { rangesContract } from '../contract/contract-ranges.js';
import { scanContract } from '../contract/contract-scan.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

type Chunk = NonNullable<IReadRowsResponse['chunks']>[number];

class ReversingConnection extends Connection {
  constructor() {
    super({ projectId: 'horae-test', instanceId: 'test' });
  }

  override async readRows(req: IReadRowsRequest, onResponse: (r: IReadRowsResponse) => void, signal?: AbortSignal): Promise<void> {
    if (req.reversed !== true) return super.readRows(req, onResponse, signal);
    const { reversed: _r, rowsLimit, ...forward } = req;
    const rows: Chunk[][] = [];
    let current: Chunk[] = [];
    await super.readRows(forward, (resp) => {
      for (const c of resp.chunks ?? []) {
        if (c.resetRow === true) {
          current = [];
          continue;
        }
        current.push(c);
        if (c.commitRow === true) {
          rows.push(current);
          current = [];
        }
      }
    }, signal);
    rows.reverse();
    const limit = rowsLimit === undefined || rowsLimit === null || Number(rowsLimit) === 0 ? rows.length : Number(rowsLimit);
    for (const row of rows.slice(0, limit)) onResponse({ chunks: row });
  }
}

describe('Store contract: bigtable (emulator; reversed reads served as Bigtable does), scans and filters', () => {
  const ctx = new ContractContext({
    capabilities: bigtableCapabilities({ endpoint: 'emulator', reverseScan: true }),
    open: ({ clock }) => openTestStore(freshPrefix(), { clock, ttlGarbageCollection: false, reverseScan: true, connection: new ReversingConnection() }),
  });
  beforeEach(() => ctx.setUp());
  afterEach(() => ctx.tearDown());
  scanContract(ctx);
  rangesContract(ctx);
  filterContract(ctx);
});

describe('bigtable scans over many pages (500 rows per ReadRows page at least)', () => {
  it('forward and reverse, with and without a limit, every row once in order', async () => {
    const conn = new ReversingConnection();
    const store = await openTestStore(freshPrefix(), { reverseScan: true, connection: conn });
    try {
      const t = await store.createTable({ name: 'pages', families: [{ name: 'f' }] });
      const keys = Array.from({ length: 1234 }, (_, i) => `r${String(i).padStart(5, '0')}`);
      await t.mutate(keys.map((k) => ({ key: utf8(k), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(k) }] })));
      const scan = async (spec: Parameters<typeof t.scan>[0]): Promise<string[]> => {
        const out: string[] = [];
        for await (const b of t.scan(spec)) out.push(...b.map((r) => fromUtf8(r.key)));
        return out;
      };
      expect(await scan({ batchRows: 100 })).toEqual(keys);
      expect(await scan({ batchRows: 100, reverse: true })).toEqual([...keys].reverse());
      expect(await scan({ batchRows: 7, reverse: true, limit: 1100 })).toEqual([...keys].reverse().slice(0, 1100));
      expect(await scan({ start: utf8('r00100'), end: utf8('r01200'), reverse: true })).toEqual(keys.slice(100, 1200).reverse());
      expect(await scan({ start: utf8('r00100'), end: utf8('r01200'), limit: 1050 })).toEqual(keys.slice(100, 1150));
      // Several ranges, pages resumed inside one range and across them; each page one ReadRows.
      const ranges = [{ start: utf8('r00010'), end: utf8('r00600') }, { start: utf8('r00700'), end: utf8('r00701') }, { start: utf8('r00900'), end: new Uint8Array(0) }];
      const inRanges = [...keys.slice(10, 600), keys[700]!, ...keys.slice(900)];
      const before = conn.calls.readRows;
      expect(await scan({ ranges, batchRows: 100 })).toEqual(inRanges);
      expect(conn.calls.readRows - before).toBe(2); // 925 rows: pages of 500
      expect(await scan({ ranges, reverse: true })).toEqual([...inRanges].reverse());
      expect(await scan({ ranges, limit: 591 })).toEqual(inRanges.slice(0, 591));
      expect(await scan({ ranges, reverse: true, limit: 740, batchRows: 3 })).toEqual([...inRanges].reverse().slice(0, 740));
    } finally {
      await store.close();
    }
  });
});
