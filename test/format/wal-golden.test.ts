/**
 * Pins the WAL bytes: the writer's output for a fixed input must match exact hex, and the
 * annotated hex example in the format document must decode to the documented fields.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, toHex, utf8 } from '../../core/api/bytes.js';
import { FORMAT_DOC, hexExample, readFormatDoc } from '../helpers/format-doc.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { WAL_MAGIC } from '../../core/wal/wal-format.js';
import { readWal } from '../../core/wal/wal-reader.js';
import { WalWriter } from '../../core/wal/wal-writer.js';


/** META (log number 7) + FULL "hello". CRCs cross-checked with an independent CRC-32C. */
const GOLDEN_HEX =
  'bdce228c' + '0014' + '05' + '484f52414557414c' + '00000001' + '0000000000000007' +
  '5857b90b' + '0005' + '01' + '68656c6c6f';

async function writeGolden(): Promise<Uint8Array> {
  const fs = new MemFileSystem();
  await fs.mkdir('/w');
  const w = await WalWriter.open(fs, '/w/000007.log', 7, { bufferedWindowMs: 5 });
  await w.append(utf8('hello'), true);
  await w.close();
  return fs.readFile('/w/000007.log');
}

describe('WAL golden bytes', () => {
  it('encodes META(log 7) + "hello" to exact bytes', async () => {
    expect(toHex(await writeGolden())).toBe(GOLDEN_HEX);
  });

  it(`decodes the annotated example in ${FORMAT_DOC}`, async () => {
    const bytes = hexExample(readFormatDoc(), 'WAL');
    // The document shows what the writer produces.
    expect(toHex(bytes)).toBe(toHex(await writeGolden()));
    expect(toHex(bytes.subarray(7, 15))).toBe(toHex(WAL_MAGIC));
    const fs = new MemFileSystem();
    await fs.mkdir('/w');
    const f = await fs.openAppend('/w/000007.log');
    await f.append(bytes);
    await f.close();
    const r = await readWal(fs, '/w/000007.log');
    expect(r.logNumber).toBe(7);
    expect(r.records.map(fromUtf8)).toEqual(['hello']);
    expect(r.droppedBytes).toBe(0);
    expect(r.tornTail).toBe(false);
  });

  it('finds the example even when other hex blocks precede the section', () => {
    const doc = '## Other\n```hex\nff\n```\n## WAL (`x`)\ntext\n```hex\n01 02 # c\n03\n```\n## SST\n';
    expect(toHex(hexExample(doc, 'WAL'))).toBe('010203');
  });
});
