/**
 * ReadOptionsBase.stripValues for the stores that read their own bytes (memory, embedded):
 * the rows a read returns, with the values of the cells in the span emptied. Bigtable
 * strips on the server instead (backends/bigtable/src/filters.ts).
 */
import { compareBytes } from './bytes.js';
import type { Cell, QualifierSpan, Row } from './store.js';

const EMPTY = new Uint8Array(0);

function inSpan(c: Cell, s: QualifierSpan): boolean {
  return c.family === s.family && compareBytes(c.qualifier, s.start) >= 0 && (s.end === undefined || compareBytes(c.qualifier, s.end) < 0);
}

/** The row with the span's cells emptied (the row itself when it has none). */
export function stripRow(row: Row, s: QualifierSpan): Row {
  let cells: Cell[] | undefined;
  for (let i = 0; i < row.cells.length; i++) {
    const c = row.cells[i]!;
    if (c.value.length === 0 || !inSpan(c, s)) continue;
    cells ??= row.cells.slice();
    cells[i] = { family: c.family, qualifier: c.qualifier, timestamp: c.timestamp, value: EMPTY };
  }
  return cells === undefined ? row : { key: row.key, cells };
}

/** Rows of a get, stripped (as they are without a span). */
export function stripRows(rows: (Row | undefined)[], s: QualifierSpan | undefined): (Row | undefined)[] {
  return s === undefined ? rows : rows.map((r) => (r === undefined ? r : stripRow(r, s)));
}

/** Batches of a scan, stripped (as they are without a span). */
export async function* stripBatches(batches: AsyncIterable<readonly Row[]>, s: QualifierSpan | undefined): AsyncGenerator<readonly Row[]> {
  if (s === undefined) {
    yield* batches;
    return;
  }
  for await (const rows of batches) yield rows.map((r) => stripRow(r, s));
}
