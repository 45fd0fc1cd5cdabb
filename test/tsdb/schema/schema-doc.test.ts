/**
 * tsdb/SCHEMA.md is executable: every annotated hex example decodes, through the schema
 * codecs, to the fields its comments name, and encoding those fields gives the same bytes.
 */
import { CLAIMS_FAMILY, CLAIMS_ROW, claimedHour, encodeClaim } from '../../../tsdb/compact/retention-sweep.js';
import * as ledger from '../../../tsdb/compact/compaction-ledger.js';
import { describe, expect, it } from 'vitest';
import { concatBytes, encodeInt64, fromHex, fromUtf8, toHex, utf8 } from '../../../core/api/bytes.js';
import { hexExample, readFormatDoc } from '../../helpers/format-doc.js';
import { buildCompactedColumn, parseDataCell, splitDataCell } from '../../../tsdb/schema/compacted.js';
import type { PointSink } from '../../../tsdb/schema/compacted.js';
import {
  HOUR_CELL_QUALIFIER, flagsOfQualifier, hourCellQualifier, offsetMsOfQualifier, pointQualifierLength, qualifierFor,
} from '../../../tsdb/schema/qualifier.js';
import { decodeRowKey, encodeRowKey, tsuidOfKey, tsuidToHex } from '../../../tsdb/schema/row-key.js';
import { bucketOfHash, javaHashBytes, saltBucket, saltSplitKeys } from '../../../tsdb/schema/salt.js';
import { decodeValue, encodeValue, parseValueString, valueLengthOfFlags } from '../../../tsdb/schema/value.js';
import { DEFAULT_WIDTHS } from '../../../tsdb/schema/widths.js';
import { decodeHourBlock } from '../../../tsdb/codec/hour-codec.js';
import type { PointBlock } from '../../../tsdb/codec/point-block.js';
import { compressRow } from '../../../tsdb/compact/hour-transform.js';
import { mergeRowCells } from '../../../tsdb/query/row-merge.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import { decodeBeat, encodeBeat } from '../../../tsdb/meta/servers.js';
import { CHANGE_FAMILY, CHANGE_QUALIFIER, changeKey, decodeChange, encodeChange } from '../../../tsdb/meta/change-log.js';
import { BUILT_KEY, BUILT_VERSION, POSTINGS_FAMILY, POSTINGS_QUALIFIER, decodePostingKey, postingRows, postingsTableSpec } from '../../../tsdb/meta/postings.js';
import { CLEANUP_ROW, CleanupRow } from '../../../tsdb/meta/cleanup-row.js';
import { openMemoryStore } from '../../../core/index.js';

const PATH = 'tsdb/SCHEMA.md';
const doc = readFormatDoc(PATH);

/** The lines of the `## heading` section. */
function section(heading: string): string[] {
  const lines = doc.split('\n');
  const h = lines.findIndex((l) => l.startsWith(`## ${heading}`));
  if (h < 0) throw new Error(`${PATH}: no "## ${heading}" section`);
  const next = lines.findIndex((l, i) => i > h && l.startsWith('## '));
  return lines.slice(h + 1, next < 0 ? lines.length : next);
}

/** Every ```hex block of a section, in order (hexExample gives only the first). */
function hexBlocks(heading: string): Uint8Array[] {
  const out: Uint8Array[] = [];
  const lines = section(heading);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```hex') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    out.push(fromHex(lines.slice(i + 1, end).map((l) => l.replace(/#.*$/, '')).join('')));
    i = end;
  }
  return out;
}

const ex = (heading: string): Uint8Array => hexExample(doc, heading, PATH);
const M1 = fromHex('000001');
const ROW_KEY_PAIRS = [fromHex('000002000003'), fromHex('000001000001')]; // dc=lga, host=web01

describe('tsdb/SCHEMA.md examples', () => {
  it('Tables: the split points are the salts of buckets 1..19', () => {
    expect(toHex(ex('Tables'))).toBe(toHex(concatBytes(...saltSplitKeys(DEFAULT_WIDTHS))));
  });

  it('UID table: forward, reverse and counter cells', () => {
    const [forward, reverse, counter] = hexBlocks('UID table');
    const name = utf8('sys.cpu.user');
    expect(toHex(forward!)).toBe(toHex(concatBytes(name, utf8('id'), utf8('metrics'), fromHex('000001'))));
    expect(toHex(reverse!)).toBe(toHex(concatBytes(fromHex('000001'), utf8('name'), utf8('metrics'), name)));
    expect(toHex(counter!)).toBe(toHex(concatBytes(Uint8Array.of(0), utf8('id'), utf8('metrics'), encodeInt64(1n))));
    expect(section('UID table').join('\n')).toContain('All Unique IDs for <kind> on <w> bytes are already');
  });

  it('Row key: decodes to its fields and re-encodes to the same bytes', () => {
    const bytes = ex('Row key');
    const d = decodeRowKey(DEFAULT_WIDTHS, bytes);
    expect({ salt: d.salt, metric: toHex(d.metric), base: d.baseTimeSec, tags: d.tags.map(([k, v]) => [toHex(k), toHex(v)]) })
      .toEqual({ salt: 3, metric: '000001', base: 1356998400, tags: [['000001', '000001'], ['000002', '000003']] });
    expect(toHex(encodeRowKey(DEFAULT_WIDTHS, M1, 1356998400, ROW_KEY_PAIRS))).toBe(toHex(bytes));
  });

  it('Salt: the hashed bytes give the documented h and the row key\'s salt', () => {
    const base = ex('Salt');
    const h = javaHashBytes(1, base, 0, base.length);
    expect(h).toBe(-112887423);
    expect((h >>> 0).toString(16)).toBe('f9457981');
    expect(bucketOfHash(h, 20)).toBe(3);
    expect(ex('Row key')[0]).toBe(3);
  });

  it('Salt: the vector table matches saltBucket', () => {
    const rows = section('Salt').filter((l) => /^\| [0-9a-f]{6} \|/.test(l));
    expect(rows.length).toBe(9);
    for (const row of rows) {
      const [metric, tags, salt] = row.split('|').slice(1, 4).map((c) => c.trim());
      const m = /^(.*?) x (\d)$/.exec(tags!);
      const tagHex = tags === '(none)' ? '' : m ? m[1]!.replace(/\s/g, '').repeat(Number(m[2])) : tags!.replace(/[\s,]/g, '');
      expect(saltBucket(fromHex(metric!), fromHex(tagHex), 20), row).toBe(parseInt(salt!, 16));
    }
  });

  it('Qualifiers: the examples decode to their offsets and flags and re-encode', () => {
    const q = ex('Qualifiers');
    const got: string[] = [];
    for (let i = 0; i < q.length; i += pointQualifierLength(q, i)) got.push(`${offsetMsOfQualifier(q, i)}/${flagsOfQualifier(q, i)}`);
    expect(got).toEqual(['3000/7', '3599000/7', '3000/11', '8/7', '3599999/7']);
    const built = [[1356998403, 7], [1357001999, 7], [1356998403, 0xb], [1356998400008, 7], [1357001999999, 7]]
      .map(([ts, f]) => qualifierFor(ts!, f!));
    expect(toHex(concatBytes(...built))).toBe(toHex(q));
  });

  it('Values: the examples are the encodings of their values', () => {
    const v = ex('Values');
    const parts = [
      encodeValue(42, true), encodeValue(-2, true), encodeValue(300, true), encodeValue(70000, true),
      encodeValue(5000000000, true), encodeValue(Number(2n ** 53n + 1n), true, 2n ** 53n + 1n),
      encodeValue(parseValueString('42.5').value, parseValueString('42.5').isInt),
      encodeValue(parseValueString('5.1').value, parseValueString('5.1').isInt),
    ];
    expect(parts.map((p) => p.flags)).toEqual([0, 0, 1, 3, 7, 7, 0xb, 0xf]);
    expect(toHex(concatBytes(...parts.map((p) => p.bytes)))).toBe(toHex(v));
    const decoded: unknown[] = [];
    let off = 0;
    for (const p of parts) {
      const d = decodeValue(p.flags, v, off);
      decoded.push(d.big ?? d.value);
      off += valueLengthOfFlags(p.flags);
    }
    expect(decoded).toEqual([42, -2, 300, 70000, 5000000000, 2n ** 53n + 1n, 42.5, 5.1]);
  });

  it('Values: the legacy cells are repaired on read', () => {
    const legacy = hexBlocks('Values')[1]!;
    const float = splitDataCell(legacy.subarray(0, 2), legacy.subarray(2, 10));
    const long = splitDataCell(legacy.subarray(10, 12), legacy.subarray(12, 20));
    expect(float.map((c) => [toHex(c.qualifier), decodeValue(0xb, c.value).value])).toEqual([['001b', 42.5]]);
    expect(long.map((c) => [toHex(c.qualifier), decodeValue(7, c.value).value])).toEqual([['0007', 7]]);
  });

  it('OpenTSDB compacted column: qualifier and value are what the builder writes', () => {
    const [q, v] = hexBlocks('OpenTSDB compacted column');
    const long8 = (n: bigint): Uint8Array => encodeInt64(n);
    const built = buildCompactedColumn([
      { qualifier: fromHex('0007'), value: long8(4n) },
      { qualifier: fromHex('f0000207'), value: long8(5n) },
      { qualifier: fromHex('f0000107'), value: long8(5n) },
    ]);
    expect(toHex(built.qualifier)).toBe(toHex(q!));
    expect(toHex(built.value)).toBe(toHex(v!));
    const seen: string[] = [];
    const sink: PointSink = { point: (o, f, b, s, n) => { seen.push(`${o}/${f}/${decodeValue(f, b, s).value}/${n}`); } };
    expect(parseDataCell(q!, v!, sink)).toBe(3);
    expect(seen).toEqual(['0/7/4/8', '4/7/5/8', '8/7/5/8']);
  });

  it('Compressed hour cell: names qualifier 0x0C (the layout is pinned by test/tsdb/codec/hour-format.test.ts)', () => {
    const text = section('Compressed hour cell').join('\n');
    expect(text).toContain('0x0C');
    expect(toHex(HOUR_CELL_QUALIFIER)).toBe('0c');
  });

  it('Suffixed hour cells: two cells of a row read last write wins, and fold into the third', () => {
    // One field per line of the example.
    const lines = section('Suffixed hour cells');
    const at = lines.findIndex((l) => l.trim() === '```hex');
    const [qa, va, qb, vb, vc] = lines.slice(at + 1, at + 6).map((l) => fromHex(l.replace(/#.*$/, '')));
    expect(toHex(qa!)).toBe(toHex(hourCellQualifier(42)));
    expect(toHex(qb!)).toBe(toHex(hourCellQualifier(57)));
    const cells = [
      { family: DATA_FAMILY, qualifier: qb!, timestamp: 2000, value: vb! },
      { family: DATA_FAMILY, qualifier: qa!, timestamp: 1000, value: va! },
    ];
    const points = (b: PointBlock): string[] => Array.from({ length: b.count }, (_, i) => `${b.offsetsMs[i]}=${b.values[i]}`);
    expect(points(decodeHourBlock(va!))).toEqual(['0=1', '10000=2']);
    expect(points(decodeHourBlock(vb!))).toEqual(['10000=5', '20000=6']);
    expect(points(mergeRowCells(cells))).toEqual(['0=1', '10000=5', '20000=6']);
    // The fold the transform writes: suffix 57 (the tag), timestamp 2000, value C.
    const folded = compressRow(cells, 57)!;
    expect(folded.map((c) => [toHex(c.qualifier), c.timestamp, toHex(c.value)])).toEqual([[toHex(qb!), 2000, toHex(vc!)]]);
  });

  it('TSUID: the row key without salt and base time, upper-case as text', () => {
    const tsuid = ex('TSUID');
    expect(toHex(tsuidOfKey(DEFAULT_WIDTHS, ex('Row key')))).toBe(toHex(tsuid));
    expect(section('TSUID').join('\n')).toContain(`# text: ${tsuidToHex(tsuid)}`);
    expect(tsuidToHex(tsuid)).toBe('000001000001000001000002000003');
  });

  it('Change log: an entry listing a new series, a rename and points written decode to what the comments say', () => {
    const [entry, rename, written] = hexBlocks('Change log');
    const key = changeKey(1n);
    const head = concatBytes(key, utf8(CHANGE_FAMILY), CHANGE_QUALIFIER);
    expect(toHex(entry!.subarray(0, head.length))).toBe(toHex(head));
    const value = entry!.subarray(head.length);
    const d = decodeChange(value)!;
    expect(toHex(d.writer)).toBe('00000000000000aa');
    expect(d.change.kind === 'series' && d.change.tsuids.map(toHex)).toEqual(['000001000001000001']);
    expect(toHex(encodeChange(d.writer, { kind: 'series', tsuids: [fromHex('000001000001000001')] }))).toBe(toHex(value));
    const r = decodeChange(rename!)!;
    expect(toHex(r.writer)).toBe('00000000000000bb');
    expect(r.change).toEqual({ kind: 'rename', uidKind: 'tagv', id: fromHex('00002a'), from: 'web01', to: 'web02' });
    expect(toHex(encodeChange(r.writer, { kind: 'rename', uidKind: 'tagv', id: fromHex('00002a'), from: 'web01', to: 'web02' }))).toBe(toHex(rename!));
    const w = decodeChange(written!)!;
    expect(toHex(w.writer)).toBe('00000000000000cc');
    expect(w.change.kind === 'written' && w.change.series.map(([t, h]) => `${toHex(t)}@${h}`)).toEqual(['000001000001000001@1706598000']);
    expect(toHex(encodeChange(w.writer, { kind: 'written', series: [[fromHex('000001000001000001'), 1706598000]] }))).toBe(toHex(written!));
  });

  it('Index cleanup: the lease cell is what CleanupRow.takeLease writes', async () => {
    const [cell] = hexBlocks('Index cleanup');
    const head = concatBytes(CLEANUP_ROW, Uint8Array.of(0x6c));
    expect(toHex(cell!.subarray(0, head.length))).toBe(toHex(head));
    const table = await (await openMemoryStore()).createTable(postingsTableSpec());
    const until = Date.UTC(2024, 0, 1, 0, 30);
    const prior = concatBytes(encodeInt64(0n), encodeInt64(6n), fromHex('00000000000000aa'));
    await table.mutate([{ key: CLEANUP_ROW, mutations: [{ type: 'put', family: POSTINGS_FAMILY, qualifier: Uint8Array.of(0x6c), value: prior }] }]);
    const row = new CleanupRow(table, fromHex('00000000000000ee'), () => until - 120_000);
    expect(await row.takeLease(120_000)).toBe(7n);
    const [r] = await table.get([CLEANUP_ROW]);
    expect(toHex(r!.cells[0]!.value)).toBe(toHex(cell!.subarray(head.length)));
  });

  it('Retention sweep claims: the claim cell of bucket 7 decodes to what the comments say', () => {
    const [cell] = hexBlocks('Retention sweep claims');
    const head = concatBytes(CLAIMS_ROW, utf8(CLAIMS_FAMILY), Uint8Array.of(0, 7));
    expect(toHex(cell!.subarray(0, head.length))).toBe(toHex(head));
    const value = cell!.subarray(head.length);
    expect(claimedHour(value)).toBe(Date.UTC(2026, 0, 9, 19) / 1000);
    expect(toHex(encodeClaim(Date.UTC(2026, 0, 9, 19) / 1000, fromHex('00000000000000dd')))).toBe(toHex(value));
  });

  it('Compaction ledger: the beat, debt and swept cells decode to what the comments say', () => {
    const [beat, debt, swept] = hexBlocks('Compaction ledger');
    const server = fromHex('00000000000000ee');
    const head = concatBytes(ledger.LEDGER_ROW, utf8(ledger.LEDGER_FAMILY), server, utf8('b'));
    expect(toHex(beat!.subarray(0, head.length))).toBe(toHex(head));
    const v = beat!.subarray(head.length);
    expect(ledger.decodeBeat(v)).toEqual({ ms: Date.UTC(2026, 0, 1), stopped: false });
    expect(toHex(ledger.encodeBeat(Date.UTC(2026, 0, 1), false))).toBe(toHex(v));
    expect(toHex(debt!.subarray(0, 9))).toBe(toHex(concatBytes(server, utf8('d'))));
    const pairs = [{ metric: fromHex('000001'), hour: Date.UTC(2026, 0, 1) / 1000 }, { metric: fromHex('00002a'), hour: Date.UTC(2026, 0, 1, 1) / 1000 }];
    expect(ledger.decodeDebt(debt!.subarray(9), 3)).toEqual(pairs);
    expect(toHex(ledger.encodeDebt(pairs, 3))).toBe(toHex(debt!.subarray(9)));
    expect(toHex(swept!)).toBe(toHex(concatBytes(ledger.SWEPT_QUALIFIER, Uint8Array.of(1))));
  });

  it('Series postings: the rows of the series of "TSUID" decode to what the comments say, and are what the writer writes', () => {
    const [host, dc, value, built] = hexBlocks('Series postings');
    const tsuid = ex('TSUID');
    const h = decodePostingKey(DEFAULT_WIDTHS, host!)!;
    expect([toHex(h.metric), toHex(h.tagk), toHex(h.tagv), toHex(h.tsuid)]).toEqual(['000001', '000001', '000001', toHex(tsuid)]);
    const d = decodePostingKey(DEFAULT_WIDTHS, dc!)!;
    expect([toHex(d.metric), toHex(d.tagk), toHex(d.tagv), toHex(d.tsuid)]).toEqual(['000001', '000002', '000003', toHex(tsuid)]);
    // Not postings: a value row, a key cut short, a pair's worth of bytes missing.
    expect(decodePostingKey(DEFAULT_WIDTHS, value!)).toBeUndefined();
    expect(decodePostingKey(DEFAULT_WIDTHS, host!.subarray(0, host!.length - 1))).toBeUndefined();
    expect(decodePostingKey(DEFAULT_WIDTHS, host!.subarray(0, 10))).toBeUndefined();
    // The writer's rows for the series: each posting then its value row, in pair order.
    const rows = postingRows(DEFAULT_WIDTHS, [tsuid]);
    expect(rows.map((r) => toHex(r.key))).toEqual([toHex(host!), '76000001000001000001', toHex(dc!), toHex(value!)]);
    for (const r of rows) expect(r.mutations).toEqual([{ type: 'put', family: 'p', qualifier: POSTINGS_QUALIFIER, value: new Uint8Array(0) }]);
    expect(toHex(built!)).toBe(toHex(concatBytes(BUILT_KEY, POSTINGS_QUALIFIER, Uint8Array.from([BUILT_VERSION]))));
  });

  it('Server heartbeats: the row key is the id in ASCII, the value a beat decodeBeat reads back', () => {
    const [key] = hexBlocks('Server heartbeats');
    const lines = section('Server heartbeats');
    const start = lines.findIndex((l) => l.trim() === '```json');
    const beat = decodeBeat(utf8(lines[start + 1]!))!;
    expect(beat).toMatchObject({ id: '9f0a2b3c4d5e6f70', address: '10.0.0.7:4242', startedMs: 1767225600000, beatMs: 1767225605000 });
    expect(beat.counters).toEqual({ pointsWritten: 1200, pointsRejected: 0, seriesCreated: 40, changesApplied: 3 });
    expect(toHex(key!)).toBe(toHex(utf8(beat.id)));
    expect(JSON.parse(fromUtf8(encodeBeat(beat)))).toEqual(JSON.parse(lines[start + 1]!));
  });
});
