/**
 * WriteGroup (tsdb/write/write-group.ts) against a reference: the straightforward
 * implementation it replaced (arrays of numbers, one index array per series, one key
 * copy per row), kept here as the model. Random groups — duplicate and out-of-order
 * timestamps, several calls, second and ms qualifiers, several hours, ints, floats,
 * doubles and big integers, groups past the columns' first size — must give the same
 * rows byte for byte, group after group (the point columns are pooled and reused).
 */
import { describe, expect, it } from 'vitest';
import type { RowMutation } from '../../../core/api/store.js';
import { Random } from '../../../core/util/random.js';
import { writeMsQualifier, writeSecondQualifier } from '../../../tsdb/schema/qualifier.js';
import { patchBaseTime } from '../../../tsdb/schema/row-key.js';
import { valueLengthOfFlags, writeValue } from '../../../tsdb/schema/value.js';
import { DEFAULT_WIDTHS } from '../../../tsdb/schema/widths.js';
import { MAX_SECOND_TIMESTAMP } from '../../../tsdb/write/data-point.js';
import { WriteGroup, newSeriesEntry, sortRuns } from '../../../tsdb/write/write-group.js';
import type { SeriesEntry } from '../../../tsdb/write/write-group.js';

const seed = Number(process.env.TEST_SEED ?? 7);

interface ModelPoint { readonly t: number; readonly value: number; readonly isInt: boolean; readonly big: bigint | undefined; readonly seq: number }

/** The pre-columns WriteGroup.build, as the model. */
function modelRows(series: readonly { template: Uint8Array; points: ModelPoint[] }[], ts: number): { key: string; qualifier: string; value: string }[] {
  const out: { key: string; qualifier: string; value: string }[] = [];
  const baseOffset = DEFAULT_WIDTHS.saltWidth + DEFAULT_WIDTHS.metric;
  for (const s of series) {
    const pts = s.points.map((p, i) => ({ ...p, i, ms: p.t > MAX_SECOND_TIMESTAMP ? p.t : p.t * 1000, isMs: p.t > MAX_SECOND_TIMESTAMP }));
    const byTime = [...pts].sort((a, b) => a.ms - b.ms || a.seq - b.seq || a.i - b.i);
    const idx = byTime.filter((p, k) => byTime[k + 1]?.ms !== p.ms);
    let start = 0;
    while (start < idx.length) {
      const base = hourOf(idx[start]!.ms);
      let end = start + 1;
      while (end < idx.length && hourOf(idx[end]!.ms) === base) end++;
      const buf = new Uint8Array((end - start) * 13);
      let at = 0;
      for (let k = start; k < end; k++) at += idx[k]!.isMs ? 4 : 2;
      const qEnd = at;
      let q = 0;
      for (let k = start; k < end; k++) {
        const p = idx[k]!;
        const flags = writeValue(buf, at, p.value, p.isInt, p.big);
        at += valueLengthOfFlags(flags);
        const off = p.ms - base * 1000;
        q += p.isMs ? writeMsQualifier(buf, q, off, flags) : writeSecondQualifier(buf, q, off / 1000, flags);
      }
      const slice = idx.slice(start, end);
      if (end - start > 1) buf[at++] = slice.some((p) => p.isMs) && slice.some((p) => !p.isMs) ? 1 : 0;
      out.push({ key: hex(patchBaseTime(s.template, baseOffset, base)), qualifier: hex(buf.subarray(0, qEnd)), value: hex(buf.subarray(qEnd, at)) });
      start = end;
    }
  }
  void ts;
  return out;
}

function hourOf(ms: number): number {
  const s = Math.floor(ms / 1000);
  return s - (s % 3600);
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function rowsOf(rows: readonly RowMutation[]): { key: string; qualifier: string; value: string }[] {
  return rows.map((r) => {
    expect(r.mutations).toHaveLength(1);
    const m = r.mutations[0]!;
    if (m.type !== 'put') throw new Error('not a put');
    return { key: hex(r.key), qualifier: hex(m.qualifier), value: hex(m.value) };
  });
}

function randomValue(r: Random): { value: number; isInt: boolean; big: bigint | undefined } {
  switch (r.int(6)) {
    case 0: return { value: r.int(200) - 100, isInt: true, big: undefined };
    case 1: return { value: r.int(2 ** 31) * (r.chance(0.5) ? -1 : 1), isInt: true, big: undefined };
    case 2: return { value: 9007199254740993, isInt: true, big: 9007199254740993n };
    case 3: return { value: r.int(1000) / 4, isInt: false, big: undefined };
    default: return { value: r.next() * 100, isInt: false, big: undefined };
  }
}

describe('WriteGroup', () => {
  it('builds the same rows as the reference, group after group', () => {
    const r = new Random(seed);
    const T0 = 1356998400;
    const entries: SeriesEntry[] = [];
    for (let s = 0; s < 40; s++) {
      const template = new Uint8Array(1 + 3 + 4 + 6 * (1 + r.int(3)));
      template.set(r.bytes(template.length));
      template.fill(0, 4, 8);
      entries.push(newSeriesEntry(template));
    }
    let seq = 0;
    for (let g = 0; g < 60; g++) {
      const group = new WriteGroup(DEFAULT_WIDTHS);
      const model = new Map<SeriesEntry, ModelPoint[]>();
      const n = r.chance(0.2) ? 1500 + r.int(3000) : r.int(60);
      // In order (the common case: the fast path), with a repeated timestamp now and then.
      const inOrder = r.chance(0.5);
      const cursor = new Map<SeriesEntry, number>();
      let callLeft = 0;
      for (let k = 0; k < n; k++) {
        if (callLeft-- <= 0) {
          seq++;
          callLeft = r.int(50);
        }
        const e = entries[r.int(r.chance(0.5) ? 3 : entries.length)]!;
        let t: number;
        if (inOrder) {
          const prev = cursor.get(e) ?? T0 + r.int(3600);
          t = r.chance(0.1) ? prev : prev + 1 + r.int(r.chance(0.05) ? 4000 : 20);
          cursor.set(e, t);
        } else {
          const sec = T0 + r.int(3 * 3600);
          t = r.chance(0.2) ? sec * 1000 + r.int(1000) : r.chance(0.1) ? sec * 1000 : sec;
        }
        const v = randomValue(r);
        group.addRaw(e, t, v.value, v.isInt, v.big, seq);
        let list = model.get(e);
        if (list === undefined) model.set(e, (list = []));
        list.push({ t, value: v.value, isInt: v.isInt, big: v.big, seq });
      }
      expect(group.size).toBe(n);
      if (n === 0) continue;
      const marks: [string, number][] = [];
      const rows = group.build(1000 + g, 5, (key, base) => {
        marks.push([hex(key), base]);
        return { lastWriteMs: 5, live: r.chance(0.5) };
      });
      const want = modelRows([...model].map(([e, points]) => ({ template: e.template, points })), 1000 + g);
      expect(rowsOf(rows), `group ${g} (seed ${seed})`).toEqual(want);
      for (const row of rows) expect((row.mutations[0] as { timestamp: number }).timestamp).toBe(1000 + g);
      // Every key told to the dirty tracker is a row of this group, and a copy of it.
      const keys = new Set(want.map((w) => w.key));
      for (const [k] of marks) expect(keys.has(k)).toBe(true);
    }
  });

  it('sortRuns orders points by (ms, call, index) as a comparison sort does, however many runs they arrive in', () => {
    const r = new Random(seed + 3);
    for (let round = 0; round < 300; round++) {
      const n = 1 + r.int(r.chance(0.3) ? 2000 : 200);
      const ms = new Float64Array(n + 8);
      const seqs = new Float64Array(n + 8);
      // Few ascending runs (connections sending their parts in time order), duplicates
      // within and across runs, or no order at all.
      const runs = r.chance(0.2) ? n : 1 + r.int(6);
      const cursors = Array.from({ length: runs }, () => r.int(50));
      const order = new Int32Array(n + 8);
      for (let i = 0; i < n; i++) {
        const run = r.int(runs);
        cursors[run]! += r.chance(0.3) ? 0 : r.int(5);
        ms[i] = cursors[run]! * 1000;
        seqs[i] = r.int(4);
        order[i] = i;
      }
      const want = Array.from(order.subarray(0, n)).sort((a, b) => ms[a]! - ms[b]! || seqs[a]! - seqs[b]! || a - b);
      sortRuns(order, new Int32Array(n), n, ms, seqs);
      expect(Array.from(order.subarray(0, n)), `round ${round} (seed ${seed})`).toEqual(want);
    }
  });

  it('reports a (series, hour) to the dirty tracker once while its mark is live, for the last two hours written', () => {
    const T0 = 1356998400;
    const e = newSeriesEntry(new Uint8Array(1 + 3 + 4 + 6));
    const marks: { base: number; mark: { lastWriteMs: number; live: boolean } }[] = [];
    const write = (hours: number[], now: number): void => {
      const g = new WriteGroup(DEFAULT_WIDTHS);
      for (const h of hours) g.addRaw(e, T0 + h * 3600 + 10, 1, true, undefined, 1);
      g.build(1, now, (_key, base) => {
        const mark = { lastWriteMs: now, live: true };
        marks.push({ base, mark });
        return mark;
      });
    };
    const reported = (): number[] => marks.map((m) => (m.base - T0) / 3600);
    write([0], 1);
    write([0, 1], 2); // the next hour begins
    write([0], 3); // a slower connection's point of the hour before
    write([1, 0], 4);
    expect(reported()).toEqual([0, 1]);
    // Both marks were touched by the later writes.
    expect(marks[0]!.mark.lastWriteMs).toBe(4);
    expect(marks[1]!.mark.lastWriteMs).toBe(4);
    // A compacted row (mark no longer live) is reported again.
    marks[0]!.mark.live = false;
    write([0], 5);
    expect(reported()).toEqual([0, 1, 0]);
    write([1], 6);
    expect(reported()).toEqual([0, 1, 0]);
    // A third hour displaces the older of the two (hour 1: the pair was 1, then 0).
    write([2], 7);
    write([0], 8);
    expect(reported()).toEqual([0, 1, 0, 2]);
    write([1], 9);
    expect(reported()).toEqual([0, 1, 0, 2, 1]);
  });

  it('refuses points after build', () => {
    const g = new WriteGroup(DEFAULT_WIDTHS);
    const e = newSeriesEntry(new Uint8Array(14));
    g.addRaw(e, 1356998400, 1, true, undefined, 1);
    g.build(1, 1);
    expect(() => g.addRaw(e, 1356998401, 1, true, undefined, 1)).toThrow(/after build/);
  });
});
