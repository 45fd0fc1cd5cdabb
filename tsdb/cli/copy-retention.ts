/**
 * What `horae copy` leaves behind under the configured retention (tsdb/SCHEMA.md
 * "Retention"): the data rows whose whole hour is older than their metric's retention,
 * the rows the row transform and the retention sweep drop and reads no longer show
 * (tsdb/compact/retention.ts: the rule is found by the metric's current name, exact names
 * before the longest prefix). A row of an hour only partly expired is copied whole; reads
 * in the destination hide its expired points as the source's did. Metrics are named from
 * the source's UID table (read once), the key layout from its schema record.
 */
import { compareBytes, fromUtf8, toHex, utf8 } from '../../core/api/bytes.js';
import type { Store, Table } from '../../core/api/store.js';
import type { TsdbConfig } from '../config.js';
import { parseRetention, retentionOfName } from '../compact/retention.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_TABLE } from '../tables.js';
import { UID_COUNTER_ROW, UID_FAMILY_NAME, UID_TABLE } from '../uid/uid-kind.js';

const HOUR_MS = 3_600_000;
const SCHEMA_QUALIFIER = utf8('schema');
const METRICS_QUALIFIER = utf8('metrics');

/** Says of a row key of table `table` whether it holds expired data only. */
export type ExpiredRow = (table: string, key: Uint8Array) => boolean;

/**
 * The expired-row test for a copy of `from` at `nowMs` under `config`'s retention, or
 * undefined when nothing expires (no retention set, or no time-series tables).
 */
export async function expiredRowsOf(from: Store, config: TsdbConfig, nowMs: number): Promise<ExpiredRow | undefined> {
  const rules = parseRetention(config.retention, config.retentionMetrics);
  if (rules.defaultMs === undefined && !rules.rules.some((r) => r.ms > 0)) return undefined;
  const tables = await from.listTables();
  if (!tables.includes(UID_TABLE) || !tables.includes(DATA_TABLE)) return undefined;
  const uid = await from.openTable(UID_TABLE);
  const w = await widthsOf(uid, config);
  const names = await metricNames(uid, w.metric);
  /** Metric UID (hex) → the first hour kept, ms (0: every hour). */
  const keptFrom = new Map<string, number>();
  return (table, key) => {
    if (table !== DATA_TABLE || key.length < w.saltWidth + w.metric + 4) return false;
    const at = w.saltWidth + w.metric;
    const metric = toHex(key.subarray(w.saltWidth, at));
    let from = keptFrom.get(metric);
    if (from === undefined) {
      const name = names.get(metric);
      const keep = name === undefined ? undefined : retentionOfName(rules, name);
      from = keep === undefined ? 0 : nowMs - keep;
      keptFrom.set(metric, from);
    }
    const baseMs = (((key[at]! << 24) | (key[at + 1]! << 16) | (key[at + 2]! << 8) | key[at + 3]!) >>> 0) * 1000;
    return baseMs + HOUR_MS <= from;
  };
}

/** The widths the source was written with (its schema record), else the configured ones. */
async function widthsOf(uid: Table, c: TsdbConfig): Promise<SchemaWidths> {
  const [row] = await uid.get([UID_COUNTER_ROW], { families: [UID_FAMILY_NAME] });
  const cell = row?.cells.find((x) => compareBytes(x.qualifier, SCHEMA_QUALIFIER) === 0);
  if (cell !== undefined) return JSON.parse(fromUtf8(cell.value)) as SchemaWidths;
  return { metric: c.uidWidthMetric, tagk: c.uidWidthTagk, tagv: c.uidWidthTagv, saltWidth: c.saltWidth, saltBuckets: c.saltBuckets };
}

/** Metric UID (hex) → name, from the reverse rows of the UID table. */
async function metricNames(uid: Table, width: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const rows of uid.scan({ families: [UID_FAMILY_NAME] })) {
    for (const r of rows) {
      if (r.key.length !== width) continue;
      const cell = r.cells.find((x) => compareBytes(x.qualifier, METRICS_QUALIFIER) === 0);
      if (cell !== undefined) out.set(toHex(r.key), fromUtf8(cell.value));
    }
  }
  return out;
}
