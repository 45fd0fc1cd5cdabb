/**
 * ReadRows responses → Store rows. A response carries CellChunks: a chunk that starts a
 * row names its key, one that starts a family or column names it, and later chunks carry
 * them forward; a value larger than one chunk arrives in pieces (valueSize > 0 on all but
 * the last); `resetRow` drops the row in progress, `commitRow` completes it.
 *
 * Cells come out sorted as the Store promises (family, qualifier bytes, timestamp
 * descending): Bigtable orders families by its own internal order, and interleaved filters
 * may emit a row's branches one after another.
 */
import { compareBytes } from '../../../core/api/bytes.js';
import type { Cell, Row } from '../../../core/api/store.js';
import { asBytes } from './client.js';
import type { IReadRowsResponse } from './client.js';
import { msFromMicros } from './timestamps.js';

type Chunk = NonNullable<IReadRowsResponse['chunks']>[number];

/** Accumulates chunks into rows; `onRow` gets each committed row, in key order. */
export class RowMerger {
  private key: Uint8Array | undefined;
  private family = '';
  private qualifier: Uint8Array = new Uint8Array(0);
  private timestamp = 0;
  private cells: Cell[] = [];
  private pieces: Uint8Array[] = [];
  private inValue = false;
  /** Key of the last committed row (a resumed read starts after it). */
  lastKey: Uint8Array | undefined;

  constructor(private readonly onRow: (row: Row) => void) {}

  push(resp: IReadRowsResponse): void {
    for (const chunk of resp.chunks ?? []) this.chunk(chunk);
  }

  /** True when a row is half received (a stream that ends now is broken). */
  get pending(): boolean {
    return this.key !== undefined;
  }

  private chunk(c: Chunk): void {
    if (c.resetRow === true) {
      this.key = undefined;
      this.cells = [];
      this.pieces = [];
      this.inValue = false;
      return;
    }
    if (!this.inValue) {
      const key = plain(asBytes(c.rowKey));
      if (key.length > 0) this.key = key;
      if (c.familyName !== null && c.familyName !== undefined) this.family = c.familyName.value ?? '';
      if (c.qualifier !== null && c.qualifier !== undefined) this.qualifier = plain(asBytes(c.qualifier.value));
      this.timestamp = msFromMicros(c.timestampMicros);
    }
    const part = asBytes(c.value);
    if ((c.valueSize ?? 0) > 0) {
      this.pieces.push(part);
      this.inValue = true;
    } else {
      const value = plain(this.pieces.length === 0 ? part : Buffer.concat([...this.pieces, part]));
      this.pieces = [];
      this.inValue = false;
      this.cells.push({ family: this.family, qualifier: this.qualifier, timestamp: this.timestamp, value });
    }
    if (c.commitRow === true) {
      if (this.key === undefined) throw new Error('BUG: ReadRows committed a row without a key');
      const cells = this.cells;
      cells.sort(compareCells);
      this.onRow({ key: this.key, cells });
      this.lastKey = this.key;
      this.key = undefined;
      this.cells = [];
    }
  }
}

/** A plain Uint8Array view of the same bytes (callers compare rows with toEqual). */
function plain(b: Uint8Array): Uint8Array {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Family, then qualifier bytes, then timestamp descending. */
export function compareCells(a: Cell, b: Cell): number {
  if (a.family !== b.family) return a.family < b.family ? -1 : 1;
  const q = compareBytes(a.qualifier, b.qualifier);
  if (q !== 0) return q;
  return b.timestamp - a.timestamp;
}
