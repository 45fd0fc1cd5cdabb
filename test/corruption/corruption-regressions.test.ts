/** Bugs the corruption sweeps (store-corruption.test.ts, wal-corruption.test.ts) found, each pinned by a small reproduction. */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { WAL_HEADER_SIZE, WAL_META_RECORD_SIZE } from '../../core/wal/wal-format.js';
import { readWal } from '../../core/wal/wal-reader.js';
import { FOOTER_BYTES } from '../../core/sst/sst-format.js';
import { BASE_OPTS, DIR, TABLE, put, rowKey, newModel, collect, openDamaged, buildSstStore } from './corruption-helpers.js';

describe('store corruption: regressions', () => {
  it('regression: a flipped SST footer version byte is STORE_CORRUPTION, not STORE_NOT_SUPPORTED', async () => {
    // core/sst/sst-format.ts decodeFooter() checks `version > SST_FORMAT_VERSION` before the
    // footer checksum that covers it, so bit rot reads as "written by a newer version".
    const mem = new MemFileSystem();
    await buildSstStore(mem, newModel());
    const name = (await mem.list(DIR)).find((n) => n.endsWith('.sst'))!;
    const size = await mem.size(`${DIR}/${name}`);
    mem.corrupt(`${DIR}/${name}`, size - FOOTER_BYTES + 39, 0x02); // version 1 -> 3
    const store = await openDamaged(mem, {});
    try {
      const t = await store.openTable(TABLE.name);
      const fail = (err: unknown): never => {
        throw err;
      };
      await expect(collect(t, false, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
    } finally {
      await store.close();
    }
  });

  it('regression: a flipped MANIFEST version byte is STORE_CORRUPTION, not STORE_NOT_SUPPORTED', async () => {
    // core/lsm/manifest.ts: the crc covers only the payload; the header's version (and
    // length) are unprotected, so bit rot in the version reads as a newer format.
    const mem = new MemFileSystem();
    await buildSstStore(mem, newModel());
    mem.corrupt(`${DIR}/MANIFEST`, 11, 0x02); // version 1 -> 3
    await expect(openDamaged(mem, {})).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
  });

  it('regression: a reverse scan over a damaged block fails with STORE_CORRUPTION, not a TypeError', async () => {
    // core/lsm/read-path.ts (reverse scan) calls readRow() right after
    // `it.seek(rowStartKey(row))` without checking `it.valid`. When that seek fails on a
    // damaged block and no other source holds a key >= row, MergingIterator.key() reads an
    // empty heap. The forward scan of the same store reports STORE_CORRUPTION correctly.
    const mem = new MemFileSystem();
    const opts = { ...BASE_OPTS, blockSizeBytes: 256, compression: 'none', compactionMinFiles: 100 } as const;
    const store = await openEmbeddedStore({ ...opts, fs: mem });
    const t = await store.createTable({ name: TABLE.name, families: TABLE.families }); // one region
    const cell = (q: string) => ({ type: 'put' as const, family: 'f', qualifier: utf8(q), value: utf8('v'.repeat(30)) });
    // SST 1: row 'a' and row 'z', whose cells span several blocks; SST 2: row 'm' only.
    await t.mutate([{ key: utf8('a'), mutations: [cell('q')] }, { key: utf8('z'), mutations: Array.from({ length: 20 }, (_, i) => cell(`q${String(i).padStart(2, '0')}`)) }]);
    await t.flush();
    await t.mutate([{ key: utf8('m'), mutations: [cell('q')] }]);
    await t.flush();
    await store.close();
    const first = (await mem.list(DIR)).filter((n) => n.endsWith('.sst')).sort()[0]!;
    mem.corrupt(`${DIR}/${first}`, 0, 0x01); // data block #0: row 'a' and the first cells of 'z'
    const reopened = await openDamaged(mem, opts);
    try {
      const t2 = await reopened.openTable(TABLE.name);
      const fail = (err: unknown): never => {
        throw err;
      };
      await expect(collect(t2, false, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
      await expect(collect(t2, true, fail)).rejects.toMatchObject({ code: 'STORE_CORRUPTION' });
    } finally {
      await reopened.close();
    }
  });

  it('regression: a flipped WAL length byte that reads as a torn tail is counted, never silent', async () => {
    // core/wal/wal-reader.ts treats a record whose (damaged) length runs past EOF as a torn
    // tail, dropping it and every later record; core/lsm/engine.ts ignores tornTailBytes, so
    // recoveryDroppedBytes stays 0 and paranoidChecks does not refuse to open.
    const mem = new MemFileSystem();
    const store = await openEmbeddedStore({ ...BASE_OPTS, fs: mem, flushOnClose: false });
    const t = await store.createTable(TABLE);
    for (let i = 0; i < 10; i++) {
      await t.mutate([{ key: utf8(rowKey(i)), mutations: [{ type: 'put', family: 'f', qualifier: utf8('q'), value: utf8(`value-${i}`) }] }]);
    }
    await store.close();
    const name = (await mem.list(DIR)).find((n) => n.endsWith('.log'))!;
    const path = `${DIR}/${name}`;
    const clean = await readWal(mem, path);
    let header = WAL_META_RECORD_SIZE;
    for (let i = 0; i < 7; i++) header += WAL_HEADER_SIZE + clean.records[i]!.length;
    mem.corrupt(path, header + 4, 0x01); // record #7's length + 256: fits the block, runs past EOF
    const reopened = await openDamaged(mem.clone(), {});
    let lostRows: number;
    let droppedBytes: number;
    try {
      const rows = await (await reopened.openTable(TABLE.name)).get(Array.from({ length: 10 }, (_, i) => utf8(rowKey(i))));
      lostRows = rows.filter((x) => x === undefined).length;
      droppedBytes = reopened.engine.counters.recoveryDroppedBytes;
    } finally {
      await reopened.close();
    }
    expect(lostRows).toBe(3); // records #7..#9, all acknowledged with durability 'sync'
    expect(droppedBytes, 'the loss must be counted').toBeGreaterThan(0);
  });
});
