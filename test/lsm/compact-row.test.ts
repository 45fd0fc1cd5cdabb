/**
 * compactRow (core/lsm/row-reader.ts), the major compaction of one row, against reads:
 * for random rows of puts and every kind of marker, a read at any snapshot at or above
 * keepSeq sees the same cells in the compacted row as in the original. Entries at or
 * below keepSeq are resolved (their markers, overwritten and surplus versions dropped);
 * newer ones are kept as they are, since reads older than them may still run.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import { KeyKind, compareInternalKeys, encodeInternalKey, kindOf, seqOf, timestampOf } from '../../core/lsm/internal-key.js';
import { Memstore } from '../../core/lsm/memstore.js';
import { compactRow, readRow } from '../../core/lsm/row-reader.js';
import type { FamilyRule } from '../../core/lsm/row-reader.js';
import { Random } from '../../core/util/random.js';
import { seeds } from '../helpers/store-model.js';

const ROW = Uint8Array.from([0x72, 0x31]);
const FAMILIES = new Map<string, FamilyRule>([
  ['f', { maxVersions: 1, ttlMs: undefined }],
  ['g', { maxVersions: 3, ttlMs: undefined }],
]);
const NOW = 1_000_000;

interface Entry { key: Uint8Array; value: Uint8Array }

/** A random row: puts and markers of every kind on a few columns, seqs 1..n in random order. */
function randomRow(rnd: Random, n: number): Entry[] {
  const seqs = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = rnd.int(i + 1);
    [seqs[i], seqs[j]] = [seqs[j]!, seqs[i]!];
  }
  const out: Entry[] = [];
  for (const seq of seqs) {
    const family = rnd.chance(0.5) ? 'f' : 'g';
    const qualifier = Uint8Array.from([0x61 + rnd.int(3)]);
    const ts = 100 + rnd.int(6) * 10;
    const r = rnd.int(20);
    const kind = r < 13 ? KeyKind.Put : r < 15 ? KeyKind.DeleteCell : r < 17 ? KeyKind.DeleteVersion : r < 19 ? KeyKind.DeleteFamily : KeyKind.DeleteRow;
    const key = kind === KeyKind.DeleteRow ? encodeInternalKey(ROW, '', new Uint8Array(0), ts, seq, kind)
      : kind === KeyKind.DeleteFamily ? encodeInternalKey(ROW, family, new Uint8Array(0), ts, seq, kind)
        : encodeInternalKey(ROW, family, qualifier, ts, seq, kind);
    out.push({ key, value: kind === KeyKind.Put ? Uint8Array.from([seq & 0xff, seq >> 8]) : new Uint8Array(0) });
  }
  return out;
}

function memstoreOf(entries: readonly Entry[]): Memstore {
  const m = new Memstore(0);
  for (const e of entries) m.add(e.key, e.value, seqOf(e.key), timestampOf(e.key), kindOf(e.key) !== KeyKind.Put);
  return m;
}

/** What a read at `snapshot` returns of the row (every version), as text. */
function read(m: Memstore, snapshot: number): string[] {
  const it = m.iterator();
  it.seekToFirst();
  if (!it.valid) return [];
  const { cells } = readRow(it, {
    snapshotSeq: snapshot, nowMs: NOW, families: FAMILIES, familyFilter: undefined, cellMatches: undefined,
    maxVersions: 10, borrowValues: false,
  });
  return cells.map((c) => `${c.family}:${toHex(c.qualifier)}@${c.timestamp}=${toHex(c.value)}`);
}

function compacted(m: Memstore, keepSeq: number): Entry[] {
  const it = m.iterator();
  it.seekToFirst();
  const out: Entry[] = [];
  compactRow(it, keepSeq, NOW, FAMILIES, (key, value) => out.push({ key: key.slice(), value: value.slice() }));
  expect(it.valid).toBe(false);
  return out;
}

describe('compactRow keeps what reads at or above keepSeq see', () => {
  for (const seed of seeds(9300, 6)) {
    it(`seed ${seed}: 200 random rows, every keepSeq`, () => {
      const rnd = new Random(seed);
      for (let round = 0; round < 200; round++) {
        const n = 1 + rnd.int(24);
        const input = memstoreOf(randomRow(rnd, n));
        for (let keepSeq = 0; keepSeq <= n; keepSeq++) {
          const out = compacted(input, keepSeq);
          for (let i = 1; i < out.length; i++) expect(compareInternalKeys(out[i - 1]!.key, out[i]!.key)).toBeLessThan(0);
          // Markers at or below keepSeq are gone; everything above it is kept as it was.
          for (const e of out) if (kindOf(e.key) !== KeyKind.Put) expect(seqOf(e.key)).toBeGreaterThan(keepSeq);
          const above = out.filter((e) => seqOf(e.key) > keepSeq).length;
          expect(above).toBe(countAbove(input, keepSeq));
          const output = memstoreOf(out);
          for (let snapshot = keepSeq; snapshot <= n; snapshot++) {
            expect(read(output, snapshot), `round ${round}, keepSeq ${keepSeq}, snapshot ${snapshot}`).toEqual(read(input, snapshot));
          }
        }
      }
    });
  }

  it('with keepSeq at the newest entry the row is fully resolved: no markers, no hidden versions', () => {
    const k = (q: string, ts: number, seq: number, kind: number): Uint8Array => encodeInternalKey(ROW, 'f', Uint8Array.from([q.charCodeAt(0)]), ts, seq, kind);
    const input = memstoreOf([
      { key: k('a', 100, 1, KeyKind.Put), value: Uint8Array.from([1]) },
      { key: k('a', 200, 2, KeyKind.Put), value: Uint8Array.from([2]) },
      { key: k('b', 100, 3, KeyKind.Put), value: Uint8Array.from([3]) },
      { key: k('b', 150, 4, KeyKind.DeleteCell), value: new Uint8Array(0) },
    ]);
    expect(compacted(input, 4).map((e) => `${seqOf(e.key)}:${kindOf(e.key)}`)).toEqual(['2:1']);
    // A read at snapshot 3 still runs: the put of b and the older a stay for it.
    expect(compacted(input, 3).map((e) => `${seqOf(e.key)}:${kindOf(e.key)}`)).toEqual(['2:1', '4:3', '3:1']);
  });
});

function countAbove(m: Memstore, keepSeq: number): number {
  let n = 0;
  const it = m.iterator();
  for (it.seekToFirst(); it.valid; it.next()) if (seqOf(it.key()) > keepSeq) n++;
  return n;
}
