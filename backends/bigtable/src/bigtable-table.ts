/**
 * A Store Table on one Bigtable table: reads in table-read.ts, writes in table-write.ts,
 * increment/checkAndPut in table-atomic.ts; regions here.
 */
import { compareBytes, toHex } from '../../../core/api/bytes.js';
import type {
  CellRef, GetOptions, KeyRange, Mutation, RegionInfo, Row, RowMutation, ScanSpec, Table, TableSpec, WriteOptions,
} from '../../../core/api/store.js';
import { normalizeScanSpec, validatedScan } from '../../../core/api/validate.js';
import { checkOpen } from './context.js';
import type { StoreContext, TableState } from './context.js';
import { checkAndPut, increment } from './table-atomic.js';
import { deleteRange } from './table-delete.js';
import { getRows, guarded, scanRows } from './table-read.js';
import { mutateRows } from './table-write.js';

export class BigtableTable implements Table {
  readonly name: string;
  readonly spec: TableSpec;

  constructor(private readonly ctx: StoreContext, private readonly state: TableState) {
    this.name = state.spec.name;
    this.spec = state.spec;
  }

  get(keys: readonly Uint8Array[], opts?: GetOptions): Promise<(Row | undefined)[]> {
    return getRows(this.ctx, this.state, keys, opts);
  }

  mutate(rows: readonly RowMutation[], opts?: WriteOptions): Promise<void> {
    return mutateRows(this.ctx, this.state, rows, opts);
  }

  scan(spec?: ScanSpec): AsyncIterable<readonly Row[]> {
    return validatedScan(() => {
      checkOpen(this.ctx);
      return normalizeScanSpec(this.spec, spec, this.ctx.caps);
    }, (s) => scanRows(this.ctx, this.state, s));
  }

  increment(key: Uint8Array, cell: CellRef, delta: bigint, opts?: WriteOptions): Promise<bigint> {
    return increment(this.ctx, this.state, key, cell, delta, opts);
  }

  checkAndPut(key: Uint8Array, check: CellRef, expected: Uint8Array | undefined, mutations: readonly Mutation[], opts?: WriteOptions): Promise<boolean> {
    return checkAndPut(this.ctx, this.state, key, check, expected, mutations, opts);
  }

  /**
   * One region per range between the table's split points (the salt-bucket pre-splits
   * Horae creates); sizes from the offsets SampleRowKeys reports (at least the bytes this
   * process wrote), counters from this process (region-stats.ts). Bigtable's own tablet
   * boundaries come and go as it rebalances and its offsets are estimates (the emulator
   * can report two boundaries at one offset), so they size regions, not bound them.
   */
  async regions(): Promise<RegionInfo[]> {
    checkOpen(this.ctx);
    const sampled = await guarded(this.ctx, `regions of table ${this.name}`, () => this.ctx.conn.sampleRowKeys(this.state.tableName));
    // Bigtable ends the samples with the empty key (the table's end, offset = its size);
    // the 2020 emulator does not (its offsets stop before the last row): ignore those.
    const samples = sampled.length > 0 && sampled[sampled.length - 1]!.key.length === 0 ? sampled : [];
    const splits = this.state.counters.splits;
    const starts = [new Uint8Array(0), ...splits]; // sorted: region i is counters.regions[i]
    // offsetOf(k): approximate bytes of the rows before k; the empty end key is the total.
    const total = samples.length === 0 ? 0 : samples[samples.length - 1]!.offsetBytes;
    const offsetOf = (k: Uint8Array): number => {
      if (k.length === 0) return total;
      let off = 0;
      for (const s of samples) if (s.key.length > 0 && compareBytes(s.key, k) <= 0) off = s.offsetBytes;
      return off;
    };
    const out: RegionInfo[] = starts.map((start, i) => {
      const end = starts[i + 1] ?? new Uint8Array(0);
      const c = this.state.counters.regions[i]!;
      const sampled = i === 0 ? offsetOf(end) : Math.max(0, offsetOf(end) - offsetOf(start));
      return {
        id: `${this.state.tableId}/${toHex(start)}`,
        start,
        end,
        stats: {
          sizeBytes: Math.max(sampled, c.bytesWritten),
          memstoreBytes: 0,
          files: 0,
          cellsWritten: c.cellsWritten,
          rowsRead: c.rowsRead,
          readRequests: c.readRequests,
          writeRequests: c.writeRequests,
        },
      };
    });
    this.state.lastRegionCount = out.length;
    return out;
  }

  deleteRange(range: KeyRange, opts?: { readonly signal?: AbortSignal }): Promise<void> {
    return deleteRange(this.ctx, this.state, range, opts?.signal);
  }

  /** Bigtable persists every acknowledged write: nothing to flush. */
  async flush(): Promise<void> {
    checkOpen(this.ctx);
  }

  /** Bigtable compacts (and garbage-collects) on its own schedule. */
  async compact(_opts?: { readonly major?: boolean }): Promise<void> {
    checkOpen(this.ctx);
  }
}
