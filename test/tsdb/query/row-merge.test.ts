/**
 * mergeRowCells (tsdb/query/row-merge.ts) against a plain reference: the cells in write
 * order (compareWriteOrder), each cell's points in its order, the last one written for a
 * millisecond kept. Random rows mix compacted columns, single-point cells (second and ms
 * qualifiers) and hour cells, in time order (the collector's no-sort path) and out of it,
 * with duplicates (in time order too: a cell rewriting the previous one's last point), integers (some beyond 2^53) and floats; calls follow one another on the
 * shared collector and a reused output block.
 */
import { describe, expect, it } from 'vitest';
import type { Cell } from '../../../core/api/store.js';
import { encodeHourBlock } from '../../../tsdb/codec/hour-codec.js';
import { appendPoint, newPointBlock, pointValue } from '../../../tsdb/codec/point-block.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { compareWriteOrder, mergeRowCells } from '../../../tsdb/query/row-merge.js';
import { buildCompactedColumn } from '../../../tsdb/schema/compacted.js';
import { hourCellQualifier, writeMsQualifier, writeSecondQualifier } from '../../../tsdb/schema/qualifier.js';
import { valueLengthOfFlags, writeValue } from '../../../tsdb/schema/value.js';

type Val = number | bigint;
interface Pt { off: number; v: Val; int: boolean }

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

/** One raw point cell (2-byte second qualifier when the offset is whole seconds, else 4-byte ms). */
function pointCell(p: Pt): { qualifier: Uint8Array; value: Uint8Array } {
  const tmp = new Uint8Array(8);
  const flags = typeof p.v === 'bigint' ? writeValue(tmp, 0, Number(p.v), true, p.v) : writeValue(tmp, 0, p.v, p.int);
  const ms = p.off % 1000 !== 0;
  const q = new Uint8Array(ms ? 4 : 2);
  if (ms) writeMsQualifier(q, 0, p.off, flags);
  else writeSecondQualifier(q, 0, p.off / 1000, flags);
  return { qualifier: q, value: tmp.slice(0, valueLengthOfFlags(flags)) };
}

function hourCell(pts: readonly Pt[]): Uint8Array {
  const b = newPointBlock(0);
  const byOff = new Map<number, Pt>();
  for (const p of pts) byOff.set(p.off, p);
  for (const p of [...byOff.values()].sort((a, c) => a.off - c.off)) appendPoint(b, p.off, p.v, p.int);
  return encodeHourBlock(b);
}

interface Row { cells: Cell[]; want: Map<number, Pt> }

function randomRow(r: () => number, ordered: boolean): Row {
  const cells: Array<{ cell: Cell; pts: Pt[] }> = [];
  const nCells = 1 + Math.floor(r() * 12);
  let t = 0;
  let ts = 1000;
  for (let c = 0; c < nCells; c++) {
    const n = 1 + Math.floor(r() * 20);
    const pts: Pt[] = [];
    for (let i = 0; i < n; i++) {
      // In time order, a cell may begin by rewriting the previous cell's last point.
      const off = ordered ? (i === 0 && c > 0 && r() < 0.3 ? t : (t += 1000 * (1 + Math.floor(r() * 3)))) : (Math.floor(r() * 40) * 1000 + (r() < 0.2 ? Math.floor(r() * 999) + 1 : 0));
      const k = r();
      const v: Val = k < 0.1 ? (2n ** 60n + BigInt(Math.floor(r() * 1000))) * (r() < 0.5 ? -1n : 1n) : k < 0.4 ? Math.floor(r() * 1e6) - 5e5 : Math.round(r() * 1e4) / 100;
      pts.push({ off, v, int: typeof v === 'bigint' || k < 0.4 });
    }
    if (!ordered && r() < 0.3) ts -= Math.floor(r() * 3); else ts += 1;
    const kind = r();
    if (kind < 0.25) {
      cells.push({ cell: { family: 't', qualifier: hourCellQualifier(c + 1), timestamp: ts, value: hourCell(pts) }, pts: dedupeLastInOrder(pts) });
    } else if (kind < 0.4 || pts.length === 1) {
      const one = pts[0]!;
      const pc = pointCell(one);
      cells.push({ cell: { family: 't', qualifier: pc.qualifier, timestamp: ts, value: pc.value }, pts: [one] });
    } else {
      const byOff = new Map<number, Pt>();
      for (const p of pts) byOff.set(p.off, p); // a compacted column holds an offset once
      const kept = [...byOff.values()].sort((a, c) => a.off - c.off);
      const col = buildCompactedColumn(kept.map(pointCell));
      cells.push({ cell: { family: 't', qualifier: col.qualifier, timestamp: ts, value: col.value }, pts: kept });
    }
  }
  // Reference: write order, then each cell's points in order; the last write wins.
  const want = new Map<number, Pt>();
  for (const { pts } of [...cells].sort((a, b) => compareWriteOrder(a.cell, b.cell))) for (const p of pts) want.set(p.off, p);
  // Hand the cells over in a shuffled order: the merge must not depend on it.
  const shuffled = cells.map((c) => c.cell);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return { cells: shuffled, want };
}

function dedupeLastInOrder(pts: readonly Pt[]): Pt[] {
  const byOff = new Map<number, Pt>();
  for (const p of pts) byOff.set(p.off, p);
  return [...byOff.values()].sort((a, c) => a.off - c.off);
}

function check(got: PointBlock, want: Map<number, Pt>): void {
  const exp = [...want.values()].sort((a, b) => a.off - b.off);
  expect(got.count).toBe(exp.length);
  for (let i = 0; i < exp.length; i++) {
    const e = exp[i]!;
    expect(got.offsetsMs[i]).toBe(e.off);
    expect(got.isInt[i]).toBe(e.int ? 1 : 0);
    const v = pointValue(got, i);
    if (typeof e.v === 'bigint') expect(v).toBe(e.v);
    else expect(v).toBe(e.v);
  }
}

describe('mergeRowCells', () => {
  for (const ordered of [true, false]) {
    it(`matches the last-write-wins reference on random rows (${ordered ? 'cells in time order' : 'out of order, duplicates'})`, () => {
      const r = rng(ordered ? 7 : 11);
      const reused = newPointBlock(0);
      for (let n = 0; n < 150; n++) {
        const row = randomRow(r, ordered);
        check(mergeRowCells(row.cells), row.want);
        check(mergeRowCells(row.cells, reused), row.want);
      }
    });
  }

  it('a row after a large one starts clean (the shared collector is reset, its arrays shrunk)', () => {
    const big: Cell[] = [];
    for (let c = 0; c < 200; c++) {
      const pts = Array.from({ length: 400 }, (_, i) => pointCell({ off: (c * 400 + i) * 10 + 1, v: i, int: true }));
      const col = buildCompactedColumn(pts);
      big.push({ family: 't', qualifier: col.qualifier, timestamp: c, value: col.value });
    }
    expect(mergeRowCells(big).count).toBe(80_000);
    const one = pointCell({ off: 5000, v: 2.5, int: false });
    const b = mergeRowCells([{ family: 't', qualifier: one.qualifier, timestamp: 1, value: one.value }]);
    expect([b.count, b.offsetsMs[0], b.values[0], b.isInt[0]]).toEqual([1, 5000, 2.5, 0]);
  });
});
