/**
 * Applies the families' row transforms (core/api/row-transform.ts) to the entries of a
 * flush or a compaction, one row at a time (core/README.md "Row transforms").
 *
 * Per row, the entries with seq <= keepSeq (what every read may see) are resolved as a
 * reader would resolve them (row-reader.ts `resolveColumn`: deletes applied, versions
 * beyond the family's limit and expired cells dropped); each transformed family's
 * surviving cells go to its transform, and what it returns is written in their place with
 * the largest sequence number of those cells. Families without a transform keep their
 * survivors as they are. Delete markers at or below keepSeq are kept unless the job is a
 * major compaction (which sees every file of the region); entries above keepSeq are kept
 * as they are. The output of the row is emitted in internal-key order.
 *
 * Why the rewrite is invisible to reads: a survivor is covered by no marker in the inputs,
 * so none covers the output either (its sequence number is the inputs' largest, its
 * timestamp at most theirs); a marker in a newer source has a larger sequence number than
 * every input (memstores flush in order and compactions take contiguous runs of files) and
 * covers the output when it covered all the cells it replaces. A transform that throws,
 * returns a cell newer than its inputs, or cannot be loaded leaves the cells as they are.
 */
import type { RowTransform, TransformCell } from '../api/row-transform.js';
import type { ColEntry, FamilyRule, Marker } from './row-reader.js';
import { DEFAULT_RULE, resolveColumn } from './row-reader.js';
import { compareRange } from '../api/bytes.js';
import { KeyKind, TRAILER_BYTES, compareInternalKeys, encodeInternalKey, familyOf, qualifierStart, seqOf, timestampOf } from './internal-key.js';

/** A transform named by a job (plain data: it crosses to the job worker). */
export interface TransformSpec {
  readonly family: string;
  readonly name: string;
  readonly module: string;
  readonly exportName: string;
  readonly options: unknown;
  /** This family's transform gives the table's row time (the first such family). */
  readonly rowTime: boolean;
}

export interface TransformPlan {
  readonly keepSeq: number;
  readonly nowMs: number;
  readonly major: boolean;
  readonly families: ReadonlyMap<string, FamilyRule>;
  readonly transforms: ReadonlyMap<string, RowTransform>;
  readonly rowTime: ((row: Uint8Array) => number | undefined) | undefined;
}

const NO_MARKERS: Marker[] = [];

export class RowTransformer {
  private readonly plan: TransformPlan;
  private keys: Uint8Array[] = [];
  private values: Uint8Array[] = [];
  /** Row-time range of the rows seen; undefined once a row had none. */
  minRowTime = Infinity;
  maxRowTime = -Infinity;
  rowTimeUnknown = false;
  /** Rows whose transform threw or broke its contract (kept as they were). */
  errors = 0;
  lastError: string | undefined;

  constructor(plan: TransformPlan) {
    this.plan = plan;
    if (plan.rowTime === undefined) this.rowTimeUnknown = true;
  }

  /** True when `key` belongs to another row than the entries added so far. */
  newRow(key: Uint8Array): boolean {
    if (this.keys.length === 0) return false;
    const a = this.keys[0]!;
    const ra = (a[0]! << 8) | a[1]!;
    const rb = (key[0]! << 8) | key[1]!;
    return ra !== rb || compareRange(a, 2, 2 + ra, key, 2, 2 + rb) !== 0;
  }

  /** Adds the next entry of the current row; `key` and `value` must stay unchanged until finish(). */
  add(key: Uint8Array, value: Uint8Array): void {
    this.keys.push(key);
    this.values.push(value);
  }

  /** Emits the current row's output in internal-key order and starts a new row. */
  finish(emit: (key: Uint8Array, value: Uint8Array) => void): void {
    const keys = this.keys;
    const values = this.values;
    if (keys.length === 0) return;
    this.keys = [];
    this.values = [];
    const plan = this.plan;
    const k0 = keys[0]!;
    const rowLen = (k0[0]! << 8) | k0[1]!;
    const row = k0.subarray(2, 2 + rowLen);
    if (plan.rowTime !== undefined && !this.rowTimeUnknown) {
      let t: number | undefined;
      try {
        t = plan.rowTime(row);
      } catch {
        t = undefined;
      }
      if (t === undefined || !Number.isFinite(t)) this.rowTimeUnknown = true;
      else {
        if (t < this.minRowTime) this.minRowTime = t;
        if (t > this.maxRowTime) this.maxRowTime = t;
      }
    }
    const outKeys: Uint8Array[] = [];
    const outValues: Uint8Array[] = [];
    const out = (k: Uint8Array, v: Uint8Array): void => {
      outKeys.push(k);
      outValues.push(v);
    };
    // Markers every read may see: row markers, family markers per family.
    let rowMarkers = NO_MARKERS;
    const famMarkers = new Map<string, Marker[]>();
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const seq = seqOf(k);
      if (seq > plan.keepSeq) continue;
      const kind = k[k.length - 1]!;
      if (kind === KeyKind.DeleteRow) {
        if (rowMarkers === NO_MARKERS) rowMarkers = [];
        rowMarkers.push({ ts: timestampOf(k), seq });
      } else if (kind === KeyKind.DeleteFamily) {
        const f = familyOf(k);
        let ms = famMarkers.get(f);
        if (ms === undefined) famMarkers.set(f, (ms = []));
        ms.push({ ts: timestampOf(k), seq });
      }
    }
    // Columns (puts and cell markers at or below keepSeq), in key order.
    let family = '';
    let transform: RowTransform | undefined;
    let cells: TransformCell[] = [];
    let cellKeys: Uint8Array[] = [];
    let cellValues: Uint8Array[] = [];
    let maxSeq = 0;
    let maxTs = -1;
    const endFamily = (): void => {
      if (transform !== undefined && cells.length > 0) {
        const replaced = this.apply(transform, row, family, cells, maxSeq, maxTs);
        if (replaced !== undefined) {
          for (const c of replaced) out(encodeInternalKey(row, family, c.qualifier, c.timestamp, maxSeq, KeyKind.Put), c.value);
        } else {
          for (let j = 0; j < cellKeys.length; j++) out(cellKeys[j]!, cellValues[j]!);
        }
      }
      cells = [];
      cellKeys = [];
      cellValues = [];
      maxSeq = 0;
      maxTs = -1;
    };
    let i = 0;
    while (i < keys.length) {
      const k = keys[i]!;
      const seq = seqOf(k);
      const kind = k[k.length - 1]!;
      if (seq > plan.keepSeq) {
        out(k, values[i]!);
        i++;
        continue;
      }
      if (kind === KeyKind.DeleteRow || kind === KeyKind.DeleteFamily) {
        if (!plan.major) out(k, values[i]!);
        i++;
        continue;
      }
      const f = familyOf(k);
      if (f !== family) {
        endFamily();
        family = f;
        transform = plan.transforms.get(f);
      }
      // The column: consecutive entries with this family and qualifier.
      const qs = qualifierStart(k);
      const qe = k.length - TRAILER_BYTES;
      const col: ColEntry[] = [];
      let j = i;
      for (; j < keys.length; j++) {
        const e = keys[j]!;
        const ek = e[e.length - 1]!;
        if (j > i && compareRange(e, 0, e.length - TRAILER_BYTES, k, 0, qe) !== 0) break;
        const es = seqOf(e);
        if (es > plan.keepSeq) {
          out(e, values[j]!);
          continue;
        }
        if (ek === KeyKind.DeleteRow || ek === KeyKind.DeleteFamily) {
          // A family marker shares the identity of an empty-qualifier column (collected above).
          if (!plan.major) out(e, values[j]!);
          continue;
        }
        if (ek !== KeyKind.Put && !plan.major) out(e, values[j]!);
        col.push({ ts: timestampOf(e), seq: es, kind: ek, value: values[j]!, key: e });
      }
      i = Math.max(j, i + 1);
      const rule = plan.families.get(f) ?? DEFAULT_RULE;
      const survivors = resolveColumn(col, rowMarkers, famMarkers.get(f) ?? NO_MARKERS, rule.maxVersions);
      const q = k.subarray(qs, qe);
      for (const v of survivors) {
        // Older versions of an expired cell are expired too.
        if (rule.ttlMs !== undefined && plan.nowMs - v.ts > rule.ttlMs) break;
        if (transform === undefined) {
          out(v.key!, v.value);
          continue;
        }
        cells.push({ qualifier: q, timestamp: v.ts, value: v.value });
        cellKeys.push(v.key!);
        cellValues.push(v.value);
        if (v.seq > maxSeq) maxSeq = v.seq;
        if (v.ts > maxTs) maxTs = v.ts;
      }
    }
    endFamily();
    if (outKeys.length === 0) return;
    const order = Array.from(outKeys.keys()).sort((a, b) => compareInternalKeys(outKeys[a]!, outKeys[b]!));
    let prev: Uint8Array | undefined;
    for (const o of order) {
      const key = outKeys[o]!;
      // A transform returning one (qualifier, timestamp) twice: the first wins.
      if (prev !== undefined && compareInternalKeys(prev, key) === 0) continue;
      emit(key, outValues[o]!);
      prev = key;
    }
  }

  /** The transform's cells, or undefined to keep the inputs (it threw or broke the contract). */
  private apply(t: RowTransform, row: Uint8Array, family: string, cells: TransformCell[], tag: number, maxTs: number): readonly TransformCell[] | undefined {
    let res: readonly TransformCell[] | undefined;
    try {
      res = t.transformRow(row, cells, { nowMs: this.plan.nowMs, tag, major: this.plan.major });
    } catch (err) {
      this.errors++;
      this.lastError = `family ${family}: ${(err as Error)?.message ?? String(err)}`;
      return undefined;
    }
    if (res === undefined) return undefined;
    for (const c of res) {
      if (!(c.qualifier instanceof Uint8Array) || !(c.value instanceof Uint8Array) || !Number.isSafeInteger(c.timestamp) || c.timestamp < 0 || c.timestamp > maxTs) {
        this.errors++;
        this.lastError = `family ${family}: the transform returned a cell newer than its inputs or malformed`;
        return undefined;
      }
    }
    return res;
  }
}
