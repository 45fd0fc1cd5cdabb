/**
 * Scanned data rows packed into one transferable buffer for a decode worker
 * (decode-pool.ts → decode-worker.ts). Only what decoding needs crosses the thread: the
 * series' index in the query, the row's base time, and its data-point cells. Little-endian:
 *
 *   row:  u32 series index | f64 base time (ms) | u16 cell count | cell…
 *   cell: u16 qualifier length | u32 value length | f64 timestamp | qualifier | value
 */
import type { Cell } from '../../core/api/store.js';

const ROW_HEAD = 4 + 8 + 2;
const CELL_HEAD = 2 + 4 + 8;

/** Accumulates rows; take() hands the bytes over and starts a new buffer. */
export class RowPacker {
  private buf: Uint8Array;
  private view: DataView;
  private len = 0;
  rows = 0;

  constructor(initialBytes = 256 * 1024) {
    this.buf = new Uint8Array(initialBytes);
    this.view = new DataView(this.buf.buffer);
  }

  get bytes(): number {
    return this.len;
  }

  /** Packs one row: the cells for which `keep` is true. */
  add(series: number, baseMs: number, cells: readonly Cell[], keep: (qualifier: Uint8Array) => boolean): void {
    let need = ROW_HEAD;
    let n = 0;
    for (const c of cells) {
      if (!keep(c.qualifier)) continue;
      need += CELL_HEAD + c.qualifier.length + c.value.length;
      n++;
    }
    this.ensure(need);
    const v = this.view;
    let o = this.len;
    v.setUint32(o, series, true);
    v.setFloat64(o + 4, baseMs, true);
    v.setUint16(o + 12, n, true);
    o += ROW_HEAD;
    for (const c of cells) {
      if (!keep(c.qualifier)) continue;
      v.setUint16(o, c.qualifier.length, true);
      v.setUint32(o + 2, c.value.length, true);
      v.setFloat64(o + 6, c.timestamp, true);
      o += CELL_HEAD;
      this.buf.set(c.qualifier, o);
      o += c.qualifier.length;
      this.buf.set(c.value, o);
      o += c.value.length;
    }
    this.len = o;
    this.rows++;
  }

  /** The packed rows (a buffer of their own, ready to transfer); the packer starts empty. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.len);
    this.len = 0;
    this.rows = 0;
    return out;
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
}

/** Calls `row` for each packed row; its cells are views into `bytes`, in packed order. */
export function unpackRows(bytes: Uint8Array, family: string, row: (series: number, baseMs: number, cells: Cell[]) => void): void {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  while (o < bytes.length) {
    const series = v.getUint32(o, true);
    const baseMs = v.getFloat64(o + 4, true);
    const n = v.getUint16(o + 12, true);
    o += ROW_HEAD;
    const cells: Cell[] = [];
    for (let i = 0; i < n; i++) {
      const ql = v.getUint16(o, true);
      const vl = v.getUint32(o + 2, true);
      const timestamp = v.getFloat64(o + 6, true);
      o += CELL_HEAD;
      const qualifier = bytes.subarray(o, o + ql);
      o += ql;
      const value = bytes.subarray(o, o + vl);
      o += vl;
      cells.push({ family, qualifier, timestamp, value });
    }
    row(series, baseMs, cells);
  }
}
