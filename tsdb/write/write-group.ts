/**
 * WriteGroup: the points of the calls that are written together (ingest.ts), kept in
 * flat arrays, and turned into one cell per row: a single-point cell, or an OpenTSDB
 * compacted column for several points (tsdb/SCHEMA.md "OpenTSDB compacted column").
 */
import type { Durability, RowMutation } from '../../core/api/store.js';
import { writeMsQualifier, writeSecondQualifier } from '../schema/qualifier.js';
import { patchBaseTime } from '../schema/row-key.js';
import { valueLengthOfFlags, writeValue } from '../schema/value.js';
import type { SchemaWidths } from '../schema/widths.js';
import { DATA_FAMILY } from '../tables.js';
import { MAX_SECOND_TIMESTAMP } from './data-point.js';
import type { IncomingPoint } from './data-point.js';
import type { DirtyMark } from './ingest.js';

/** What the writer keeps per series: its key template and per-group scratch. */
export interface SeriesEntry {
  /** The row key with salt, metric and tags filled in and base time 0. */
  readonly template: Uint8Array;
  lastBase: number;
  dirty: DirtyMark | undefined;
  /** The group whose point indices `points` holds. */
  groupId: number;
  points: number[];
}

let nextGroupId = 0;

export class WriteGroup {
  readonly id = nextGroupId++;
  durability: Durability = 'buffered';
  readonly done: Promise<void>;
  private readonly widths: SchemaWidths;
  private readonly entries: SeriesEntry[] = [];
  private readonly ms: number[] = [];
  private readonly values: number[] = [];
  private readonly ints: boolean[] = [];
  /** 1 where the point came with a millisecond timestamp (a 4-byte qualifier). */
  private readonly msQual: boolean[] = [];
  private readonly seqs: number[] = [];
  private bigs: Map<number, bigint> | undefined;
  private settle: { resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor(widths: SchemaWidths) {
    this.widths = widths;
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // A group nobody awaits any more must not surface as an unhandled rejection.
    this.done.catch(() => undefined);
  }

  get size(): number {
    return this.ms.length;
  }

  requireDurability(d: Durability): void {
    if (d === 'sync') this.durability = 'sync';
  }

  /** Adds a validated point of series `e`, written by call number `seq`. */
  add(e: SeriesEntry, p: IncomingPoint, seq: number): void {
    this.addRaw(e, p.timestamp, p.value, p.isInt, p.big, seq);
  }

  /** add() with the point's fields passed one by one (the telnet fast path has no point object). */
  addRaw(e: SeriesEntry, t: number, value: number, isInt: boolean, big: bigint | undefined, seq: number): void {
    const i = this.ms.length;
    const isMs = t > MAX_SECOND_TIMESTAMP;
    this.ms.push(isMs ? t : t * 1000);
    this.values.push(value);
    this.ints.push(isInt);
    this.msQual.push(isMs);
    this.seqs.push(seq);
    if (big !== undefined) (this.bigs ??= new Map()).set(i, big);
    if (e.groupId !== this.id) {
      e.groupId = this.id;
      e.points = [i];
      this.entries.push(e);
    } else {
      e.points.push(i);
    }
  }

  /**
   * One RowMutation per (series, hour): a put versioned `ts`. `onRowWritten` is told of
   * rows a series had not written since it was last compacted.
   */
  build(ts: number, now: number, onRowWritten?: (key: Uint8Array, base: number, now: number) => DirtyMark): RowMutation[] {
    const rows: RowMutation[] = [];
    const baseOffset = this.widths.saltWidth + this.widths.metric;
    // One buffer for all qualifiers and values of the group: 4 + 8 bytes per point at most, plus meta bytes.
    const buf = new Uint8Array(this.ms.length * 13);
    let at = 0;
    for (const e of this.entries) {
      const idx = this.ordered(e.points);
      let start = 0;
      while (start < idx.length) {
        const base = hourOf(this.ms[idx[start]!]!);
        let end = start + 1;
        while (end < idx.length && hourOf(this.ms[idx[end]!]!) === base) end++;
        const baseMs = base * 1000;
        const qStart = at;
        let anyMs = false;
        let anyS = false;
        for (let k = start; k < end; k++) {
          const i = idx[k]!;
          if (this.msQual[i]) {
            anyMs = true;
            at += 4;
          } else {
            anyS = true;
            at += 2;
          }
        }
        const qualifier = buf.subarray(qStart, at);
        const vStart = at;
        let q = qStart;
        for (let k = start; k < end; k++) {
          const i = idx[k]!;
          const flags = writeValue(buf, at, this.values[i]!, this.ints[i]!, this.bigs?.get(i));
          at += valueLengthOfFlags(flags);
          const off = this.ms[i]! - baseMs;
          if (this.msQual[i]) q += writeMsQualifier(buf, q, off, flags);
          else q += writeSecondQualifier(buf, q, off / 1000, flags);
        }
        if (end - start > 1) buf[at++] = anyMs && anyS ? 1 : 0;
        const value = buf.subarray(vStart, at);
        const key = patchBaseTime(e.template, baseOffset, base);
        rows.push({ key, mutations: [{ type: 'put', family: DATA_FAMILY, qualifier, value, timestamp: ts }] });
        if (base !== e.lastBase || e.dirty === undefined || !e.dirty.live) {
          e.lastBase = base;
          e.dirty = onRowWritten?.(key, base, now);
        } else {
          e.dirty.lastWriteMs = now;
        }
        start = end;
      }
    }
    return rows;
  }

  resolve(): void {
    this.settle?.resolve();
  }

  reject(err: Error): void {
    this.settle?.reject(err);
  }

  /**
   * The point indices of one series in ascending ms order, one per ms: the point of the
   * latest call wins, and within a call the later point. Already ordered in the common case.
   */
  private ordered(points: number[]): number[] {
    let sorted = true;
    for (let k = 1; k < points.length; k++) {
      if (this.ms[points[k]!]! <= this.ms[points[k - 1]!]!) {
        sorted = false;
        break;
      }
    }
    if (sorted) return points;
    const byTime = [...points].sort((a, b) => this.ms[a]! - this.ms[b]! || this.seqs[a]! - this.seqs[b]! || a - b);
    const out: number[] = [];
    for (let k = 0; k < byTime.length; k++) {
      const i = byTime[k]!;
      const next = byTime[k + 1];
      if (next !== undefined && this.ms[next] === this.ms[i]) continue; // a later write of the same ms follows
      out.push(i);
    }
    return out;
  }
}

function hourOf(ms: number): number {
  const s = Math.floor(ms / 1000);
  return s - (s % 3600);
}
