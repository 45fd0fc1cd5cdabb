/**
 * The series index: one row per series ever written, keyed by its TSUID (metric UID then
 * the tag pairs, tsdb/SCHEMA.md "Series index"), so every series of a metric is one prefix
 * scan away. It serves /api/search/lookup (Grafana's template variables) and metric-scoped
 * suggestions without OpenTSDB's meta-sync step: the writer records each series the first
 * time it sees it (per process), in one mutate per write call.
 */
import { prefixEnd } from '../../core/api/bytes.js';
import type { RowMutation, Table, TableSpec } from '../../core/api/store.js';

export const META_TABLE = 'tsdb-meta';
export const META_FAMILY = 'name';
/** Qualifier of the first-seen time (8-byte big-endian ms). */
export const META_CREATED = Uint8Array.from([0x63]); // 'c'

export function metaTableSpec(): TableSpec {
  return { name: META_TABLE, families: [{ name: META_FAMILY, maxVersions: 1 }] };
}

export class SeriesIndex {
  private readonly table: Table;

  constructor(table: Table) {
    this.table = table;
  }

  /** Records series (TSUIDs) as seen at `nowMs`; idempotent. Durable before it resolves. */
  async record(tsuids: readonly Uint8Array[], nowMs: number): Promise<void> {
    if (tsuids.length === 0) return;
    const value = new Uint8Array(8);
    new DataView(value.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(nowMs))));
    const rows: RowMutation[] = tsuids.map((key) => ({ key, mutations: [{ type: 'put', family: META_FAMILY, qualifier: META_CREATED, value }] }));
    await this.table.mutate(rows, { durability: 'sync' });
  }

  /** TSUIDs starting with `prefix` (a metric UID, or empty for all), in order, at most `limit`. */
  async tsuids(prefix: Uint8Array, limit: number, signal?: AbortSignal): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    const spec = prefix.length === 0 ? {} : { start: prefix, end: prefixEnd(prefix) };
    for await (const rows of this.table.scan({ ...spec, families: [META_FAMILY], batchRows: 1024, ...(signal === undefined ? {} : { signal }) })) {
      for (const r of rows) {
        out.push(r.key);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }
}
