/**
 * A row transform for core's tests: a family's cells become one cell `m` whose value lists
 * every input cell as `qualifier=value;` (latin1), versioned at the newest input. Rows
 * whose first key byte (their "row time") is below `options.expiredBefore` are dropped.
 */
import type { RowTransform, RowTransformFactory, TransformCell } from '../../core/api/row-transform.js';

const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

export const mergeTransform: RowTransformFactory = (options): RowTransform => {
  const expiredBefore = (options as { expiredBefore?: number } | undefined)?.expiredBefore;
  return {
    transformRow(row, cells): TransformCell[] {
      if (expiredBefore !== undefined && row[0]! < expiredBefore) return [];
      let ts = 0;
      let text = '';
      for (const c of cells) {
        ts = Math.max(ts, c.timestamp);
        text += latin1(c.qualifier) === 'm' ? latin1(c.value) : `${latin1(c.qualifier)}=${latin1(c.value)};`;
      }
      return [{ qualifier: Buffer.from('m'), timestamp: ts, value: Buffer.from(text, 'latin1') }];
    },
    rowTime: (row) => row[0],
  };
};
