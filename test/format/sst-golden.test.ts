import { describe, expect, it } from 'vitest';
import { FORMAT_DOC, hexExample, readFormatDoc } from '../helpers/format-doc.js';
import { compareBytes, fromHex, fromUtf8, toHex, utf8 } from '../../core/api/bytes.js';
import type { RandomAccessFile } from '../../core/fs/fs.js';
import { KeyKind, compareInternalKeys, encodeInternalKey, parseInternalKey, rowOf } from '../../core/lsm/internal-key.js';
import { dumpSst } from '../../core/sst/dump.js';
import { SstReader } from '../../core/sst/sst-reader.js';
import { SstWriter } from '../../core/sst/sst-writer.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';

/** The document holding the SST section with its ```hex example (relative to the repo root). */
const SST_FORMAT_DOC = FORMAT_DOC;


/** The tiny SST of the example: what the writer must produce, byte for byte. */
const TINY_HEX =
  '0005036170706c657265640205067269636f746f72616e676500060662616e616e6179656c6c6f770000000000000001' +
  '00ebe46b8d111028b34010818a06002082bbb9de0009ab736d616c6c6573744b6579c4056170706c65aa6c6172676573' +
  '744b6579c40662616e616e61a7656e747269657303aa64617461426c6f636b7301ab7261774b6579427974657312ad72' +
  '617756616c756542797465730fab636f6d7072657373696f6ea46e6f6e65af626c6f6f6d426974735065724b65790aa5' +
  '70726f7073de0001aa746f6d6273746f6e657301001f9a7d8300060262616e616e6100300000000000000001005b873d' +
  'f000000000000000350000000900000000000000430000009100000000000000d9000000130000000141b2f1dd484f52' +
  '4145535354';

const TINY_ENTRIES: [string, string][] = [['apple', 'red'], ['apricot', 'orange'], ['banana', 'yellow']];

async function writeTiny(): Promise<Uint8Array> {
  const fs = new MemFileSystem();
  await fs.mkdir('/d');
  const f = await fs.openAppend('/d/000007.sst', { truncate: true });
  const w = new SstWriter(f, { compare: compareBytes, bloomBitsPerKey: 10, compression: 'none' });
  for (const [k, v] of TINY_ENTRIES) w.add(utf8(k), utf8(v));
  await w.finish({ tombstones: 1 });
  return fs.readFile('/d/000007.sst');
}

/** A RandomAccessFile over bytes in memory. */
function bytesFile(path: string, bytes: Uint8Array): RandomAccessFile {
  return {
    path,
    size: bytes.length,
    readSync(position, length) {
      if (position + length > bytes.length) throw Object.assign(new Error('short read'), { code: 'ESHORT' });
      return bytes.slice(position, position + length);
    },
    async close() {},
  };
}


describe('SST golden bytes', () => {
  it('the writer produces exactly the committed bytes for a fixed tiny SST', async () => {
    expect(toHex(await writeTiny())).toBe(TINY_HEX);
  });

  it(`the annotated hex example in ${SST_FORMAT_DOC} is that file and decodes`, () => {
    const bytes = hexExample(readFormatDoc(), 'SST');
    expect(toHex(bytes)).toBe(TINY_HEX);
    const r = SstReader.open(bytesFile('/doc/example.sst', bytes), { compare: compareBytes, cacheId: 1 });
    expect(r.props).toEqual({ tombstones: 1 });
    expect(r.properties).toMatchObject({ entries: 3, dataBlocks: 1, rawKeyBytes: 18, rawValueBytes: 15, compression: 'none', bloomBitsPerKey: 10 });
    expect(fromUtf8(r.smallestKey)).toBe('apple');
    expect(fromUtf8(r.largestKey)).toBe('banana');
    expect(r.footer).toMatchObject({ filter: { offset: 53, size: 9 }, properties: { offset: 67, size: 145 }, index: { offset: 217, size: 19 }, version: 1 });
    const it = r.iterator();
    const got: [string, string][] = [];
    for (it.seekToFirst(); it.valid; it.next()) got.push([fromUtf8(it.key()), fromUtf8(it.value())]);
    expect(got).toEqual(TINY_ENTRIES);
    for (const [k] of TINY_ENTRIES) expect(r.mayContain(utf8(k))).toBe(true);
    expect(['cherry', 'date', 'fig'].filter((k) => r.mayContain(utf8(k)))).toEqual([]);
  });

  it('dumps the tiny SST as an annotated tree', async () => {
    const dump = dumpSst(await writeTiny(), { formatKey: fromUtf8, formatValue: fromUtf8 });
    expect(dump).toContain('+11 shared 2 unshared 5 value 6: apricot = orange');
    await expect(dump).toMatchFileSnapshot('./__golden__/sst-small.txt');
  });

  it('dumps internal keys across blocks, elides entries past maxEntries, and flags damage', async () => {
    const fs = new MemFileSystem();
    await fs.mkdir('/d');
    const f = await fs.openAppend('/d/000008.sst', { truncate: true });
    const w = new SstWriter(f, { compare: compareInternalKeys, bloomKey: rowOf, blockSizeBytes: 128, restartInterval: 2 });
    for (let i = 0; i < 8; i++) {
      w.add(encodeInternalKey(utf8(`host${i >> 1}`), 't', new Uint8Array([0, i & 1]), 1000 + i, 50 + i, KeyKind.Put), new Uint8Array([i]));
    }
    await w.finish({ minTs: 1000, maxTs: 1007 });
    const bytes = await fs.readFile('/d/000008.sst');
    const formatKey = (k: Uint8Array): string => {
      const p = parseInternalKey(k);
      return `${fromUtf8(p.row)}/${p.family}:${toHex(p.qualifier)}@${p.timestamp}#${p.seq}k${p.kind}`;
    };
    const dump = dumpSst(bytes, { formatKey, maxEntries: 5 });
    expect(dump).toContain('... entries elided (maxEntries)');
    await expect(dump).toMatchFileSnapshot('./__golden__/sst-internal-keys.txt');
    const damaged = bytes.slice();
    damaged[5] ^= 0xff;
    const bad = dumpSst(damaged, { formatKey });
    expect(bad).toMatch(/block #0 @0 size \d+ compression none checksum 0x[0-9a-f]{8} \(MISMATCH, computed 0x[0-9a-f]{8}\)/);
  });
});
