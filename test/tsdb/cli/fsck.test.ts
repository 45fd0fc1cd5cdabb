/**
 * `horae fsck`: a clean store exits 0 with its counts; damage made through the Store
 * API (a deleted reverse UID row, a lagging counter, a row key of the wrong length, an
 * undecodable cell) exits 1 naming the problem; --fix repairs what it can and compresses
 * closed hours.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { utf8 } from '../../../core/api/bytes.js';
import { encodeHourBlock } from '../../../tsdb/codec/hour-codec.js';
import { unregisterRowTransform } from '../../../core/api/row-transform.js';
import { DATA_FAMILY, DATA_TRANSFORM } from '../../../tsdb/tables.js';
import { UID_COUNTER_ROW, UID_FAMILY_ID, UID_FAMILY_NAME } from '../../../tsdb/uid/uid-kind.js';
import { horae, readAll, tempDir, withTsdb } from './cli-helpers.js';

const T0 = 1_600_000_000 - (1_600_000_000 % 3600);

describe('horae fsck', () => {
  let t: { dir: string; cleanup: () => void };
  let data: string;
  const fsck = (...args: string[]) => horae(['fsck', '--data-dir', data, ...args]);

  beforeEach(async () => {
    t = tempDir();
    data = join(t.dir, 'data');
    const f = join(t.dir, 'in.txt');
    const lines: string[] = [];
    for (let i = 0; i < 100; i++) lines.push(`sys.cpu.user ${T0 + i * 60} ${i} host=a`, `sys.cpu.user ${T0 + i * 60} ${-i} host=b`);
    writeFileSync(f, lines.join('\n'));
    expect((await horae(['import', '--data-dir', data, f])).code).toBe(0);
  });
  afterEach(() => t.cleanup());

  it('reports a clean store with exit 0 and its counts', async () => {
    const r = await fsck();
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('uid: 1 metrics, 1 tagk, 2 tagv');
    expect(r.out).toContain('data: 4 rows, 200 points, 2 series; 0 rows of closed hours not yet compressed');
    expect(r.out).toContain('summary: no problems found');
  });

  it('names a missing reverse UID mapping (exit 1); --fix recreates it', async () => {
    await withTsdb(data, async (tsdb) => {
      const id = await tsdb.metrics.getId('sys.cpu.user');
      // Row 000001 holds the reverse mappings of all three kinds: drop only the metric's.
      await tsdb.uid.mutate([{ key: id!, mutations: [{ type: 'deleteCell', family: UID_FAMILY_NAME, qualifier: utf8('metrics') }] }]);
    });
    const r = await fsck();
    expect(r.code).toBe(1);
    expect(r.out).toContain("ERROR uid.missing_reverse: metrics 'sys.cpu.user' -> 000001 has no reverse mapping");
    expect(r.out).toMatch(/ERROR data\.unknown_uid: metrics UID 000001 \(first seen in row [0-9a-f]+\) has no name/);
    expect(r.out).toMatch(/summary: 2 errors, 0 warnings \(uid\.missing_reverse 1, data\.unknown_uid 1\)/);

    const fixed = await fsck('--fix');
    expect(fixed.out).toContain("fixed: metrics 000001 -> 'sys.cpu.user' recreated");
    expect(fixed.code).toBe(0);
    expect((await fsck()).code).toBe(0);
  });

  it('names a UID counter behind the assigned ids; --fix raises it', async () => {
    await withTsdb(data, async (tsdb) => {
      await tsdb.uid.increment(UID_COUNTER_ROW, { family: UID_FAMILY_ID, qualifier: utf8('tagv') }, -2n);
    });
    const r = await fsck();
    expect(r.code).toBe(1);
    expect(r.out).toContain('ERROR uid.counter_behind: tagv counter is 0, but UID 2 is assigned');
    const fixed = await fsck('--fix');
    expect(fixed.out).toContain('fixed: tagv counter raised to 2');
    expect(fixed.code).toBe(0);
  });

  it('reports a leaked UID (reverse mapping only) as a warning, exit 0', async () => {
    await withTsdb(data, async (tsdb) => {
      await tsdb.uid.mutate([{ key: utf8('sys.cpu.user'), mutations: [{ type: 'deleteRow' }] }]);
    });
    const r = await fsck();
    expect(r.out).toContain("warning uid.orphan_reverse: metrics 000001 -> 'sys.cpu.user' has no forward mapping");
    expect(r.code).toBe(0);
  });

  it('names bad row keys and undecodable cells', async () => {
    await withTsdb(data, async (tsdb) => {
      const [first] = await (async () => {
        for await (const rows of tsdb.data.scan({ limit: 1 })) return rows;
        return [];
      })();
      await tsdb.data.mutate([
        { key: Uint8Array.of(1, 2, 3), mutations: [{ type: 'put', family: DATA_FAMILY, qualifier: Uint8Array.of(0, 0), value: Uint8Array.of(1) }] },
        { key: first!.key, mutations: [{ type: 'put', family: DATA_FAMILY, qualifier: Uint8Array.of(0x0c), value: Uint8Array.of(0xff, 0xff, 0xff) }] },
      ]);
    });
    const r = await fsck();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ERROR data\.bad_key: row key 010203 has 3 bytes/);
    expect(r.out).toMatch(/ERROR data\.bad_cell: row [0-9a-f]+: /);
  });

  it('names an hour cell whose summary disagrees with its points', async () => {
    const n = 128;
    const cell = encodeHourBlock({ count: n, offsetsMs: Int32Array.from({ length: n }, (_, i) => i * 10_000), values: new Float64Array(n).fill(0.25), isInt: new Uint8Array(n) });
    expect(Array.from(cell.subarray(0, 12))).toEqual([0x11, 0x80, 0x01, 0x00, 0x40, 0x40, 0, 0, 0, 0, 0, 0]); // hdr, count, NaN count, sum 32
    cell[11] = 1; // sum 32 + 1 ulp
    await withTsdb(data, async (tsdb) => {
      const [first] = await (async () => {
        for await (const rows of tsdb.data.scan({ limit: 1 })) return rows;
        return [];
      })();
      await tsdb.data.mutate([{ key: first!.key, mutations: [{ type: 'put', family: DATA_FAMILY, qualifier: Uint8Array.of(0x0c), value: cell }] }]);
    });
    const r = await fsck();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ERROR data\.bad_summary: row [0-9a-f]+: hour summary sum 32\.00000000000001 differs from the points' 32/);
  });

  it('finds no closed hour left uncompressed: the store compresses rows as it flushes them', async () => {
    await withTsdb(data, async (tsdb) => {
      await tsdb.ingest.write([
        { metric: 'sys.cpu.user', timestamp: T0 + 7200, value: 1, isInt: true, tags: [['host', 'a']] },
        { metric: 'sys.cpu.user', timestamp: T0 + 7260, value: 2, isInt: true, tags: [['host', 'a']] },
      ]);
    });
    const r = await fsck();
    expect(r.code).toBe(0);
    expect(r.out).toContain('data: 5 rows, 202 points, 2 series; 0 rows of closed hours not yet compressed');
    expect((await readAll(data)).uncompactedRows).toBe(0);
  });

  it('counts closed hours written as raw cells (a store that did not compress them); --fix compresses them', async () => {
    await withTsdb(data, async (tsdb) => {
      const key = (await tsdb.data.scan({ limit: 1 })[Symbol.asyncIterator]().next()).value![0]!.key;
      // A raw OpenTSDB point cell beside the compressed one, as a store without the transform leaves it.
      await tsdb.data.mutate([{ key, mutations: [{ type: 'put', family: DATA_FAMILY, qualifier: Uint8Array.of(0xe0, 0xf0), value: Uint8Array.of(7) }] }]);
      // Written straight to a file: no flush runs the transform on it.
      unregisterRowTransform(DATA_TRANSFORM);
      await tsdb.data.flush();
    });
    const r = await fsck();
    expect(r.code).toBe(0);
    expect(r.out).toContain('data: 4 rows, 201 points, 2 series; 1 rows of closed hours not yet compressed');
    const fixed = await fsck('--fix');
    expect(fixed.code).toBe(0);
    expect(fixed.out).toContain('fixed: compressed 1 closed series-hours');
    expect(fixed.out).toMatch(/after --fix:\n[^]*0 rows of closed hours not yet compressed/);
    expect((await readAll(data)).uncompactedRows).toBe(0);
  });

  it('refuses a directory without a store', async () => {
    const r = await horae(['fsck', '--data-dir', join(t.dir, 'nothing')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no store at');
  });
});
