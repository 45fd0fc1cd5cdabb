/**
 * The packed memstore (core/lsm/memstore.ts) against a sorted-array model: inserts in key
 * order, in random order and mixed; iteration both ways; seeks; slab boundaries (entries
 * larger than a slab, tiny slabs); size accounting; the flush serialization.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../core/api/bytes.js';
import type { RowMutation } from '../../core/api/store.js';
import type { InternalIterator } from '../../core/iter/internal-iterator.js';
import {
  KeyKind, compareInternalKeys, encodeInternalKey, kindOf, rowEndKey, rowStartKey, seqOf, timestampOf,
} from '../../core/lsm/internal-key.js';
import { ENTRY_OVERHEAD_BYTES, Memstore } from '../../core/lsm/memstore.js';
import type { MemstoreOptions } from '../../core/lsm/memstore.js';
import { LEAF_MAX, ROW_PREFIX_BYTES, compareKeysAfterPrefix, rowPrefixAt } from '../../core/lsm/memstore-slab.js';
import { decodeBatch, decodeBatchEntries, encodeBatch } from '../../core/lsm/write-batch.js';
import { ByteReader } from '../../core/util/coding.js';
import { Random } from '../../core/util/random.js';
import { seeds } from '../helpers/store-model.js';

interface Entry {
  key: Uint8Array;
  value: Uint8Array;
}

const TINY_SLABS: MemstoreOptions = { slabMinBytes: 64, slabMaxBytes: 256 };

/**
 * Rows drawn so that many share long prefixes (the row-prefix numbers tie and the byte
 * comparison decides) and lengths straddle the 6-, 12- and 18-byte prefix boundaries.
 */
function randomRow(rnd: Random): Uint8Array {
  const len = rnd.chance(0.2) ? rnd.range(18, 44) : rnd.range(0, 24);
  const row = new Uint8Array(len);
  const alphabet = rnd.chance(0.5) ? 2 : 256;
  const shared = rnd.chance(0.5) ? 10 : 16;
  for (let i = 0; i < len; i++) row[i] = i < shared && rnd.chance(0.7) ? 0x41 : rnd.int(alphabet);
  return row;
}

/**
 * Rows for a write batch: a put in family f (values up to `maxValue` bytes), then with
 * these chances a second put in family g and a row delete.
 */
function randomMutations(rnd: Random, n: number, o: { maxValue: number; secondPut?: number; deleteRow: number }): RowMutation[] {
  const rows: RowMutation[] = [];
  for (let r = 0; r < n; r++) {
    rows.push({
      key: randomRow(rnd).map((b) => b | 1),
      mutations: [
        { type: 'put', family: 'f', qualifier: rnd.bytes(2), value: rnd.bytes(rnd.range(0, o.maxValue)), timestamp: rnd.range(0, 9) },
        ...(o.secondPut !== undefined && rnd.chance(o.secondPut) ? [{ type: 'put' as const, family: 'g', qualifier: rnd.bytes(3), value: rnd.bytes(rnd.range(0, 200)) }] : []),
        ...(rnd.chance(o.deleteRow) ? [{ type: 'deleteRow' as const, upTo: 7 }] : []),
      ],
    });
  }
  return rows;
}

function randomEntries(rnd: Random, n: number, maxValue: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const kind = rnd.chance(0.1) ? KeyKind.DeleteCell : KeyKind.Put;
    const key = encodeInternalKey(
      randomRow(rnd), rnd.chance(0.5) ? 'f' : 'gg', rnd.bytes(rnd.range(0, 3)),
      rnd.range(0, 5) * 1000, i + 1, kind,
    );
    const value = kind === KeyKind.Put ? rnd.bytes(rnd.chance(0.05) ? rnd.range(0, maxValue) : rnd.range(0, 12)) : new Uint8Array(0);
    out.push({ key, value });
  }
  return out;
}

function sorted(entries: Entry[]): Entry[] {
  return [...entries].sort((a, b) => compareInternalKeys(a.key, b.key));
}

function addAll(m: Memstore, entries: Entry[]): void {
  for (const e of entries) m.add(e.key, e.value, seqOf(e.key), timestampOf(e.key), kindOf(e.key) !== KeyKind.Put);
}

function forward(it: InternalIterator): string[] {
  const out: string[] = [];
  for (it.seekToFirst(); it.valid; it.next()) out.push(`${toHex(it.key())}=${toHex(it.value())}`);
  return out;
}

function backward(it: InternalIterator): string[] {
  const out: string[] = [];
  for (it.seekToLast(); it.valid; it.prev()) out.push(`${toHex(it.key())}=${toHex(it.value())}`);
  return out;
}

const show = (e: Entry) => `${toHex(e.key)}=${toHex(e.value)}`;

/** Index of the first model entry >= target. */
function lowerBound(model: Entry[], target: Uint8Array): number {
  let i = 0;
  while (i < model.length && compareInternalKeys(model[i]!.key, target) < 0) i++;
  return i;
}

/** Index of the last model entry <= target, or -1. */
function floorIndex(model: Entry[], target: Uint8Array): number {
  let i = model.length - 1;
  while (i >= 0 && compareInternalKeys(model[i]!.key, target) > 0) i--;
  return i;
}

describe('Memstore against a sorted-array model', () => {
  const orders = ['in order', 'random', 'mostly in order'] as const;
  for (const order of orders) {
    for (const seed of seeds(7100, 3)) {
      it(`${order}, seed ${seed}: iteration and seeks match the model`, () => {
        const rnd = new Random(seed);
        let entries = randomEntries(rnd, 3000, 700);
        if (order === 'in order') entries = sorted(entries);
        if (order === 'mostly in order') {
          entries = sorted(entries);
          for (let i = 0; i < 300; i++) {
            const a = rnd.int(entries.length);
            const b = rnd.int(entries.length);
            [entries[a], entries[b]] = [entries[b]!, entries[a]!];
          }
        }
        const m = new Memstore(0, TINY_SLABS);
        addAll(m, entries);
        const model = sorted(entries);
        expect(m.count).toBe(model.length);
        expect(m.leafCount).toBeGreaterThan(model.length / LEAF_MAX);
        expect(forward(m.iterator())).toEqual(model.map(show));
        expect(backward(m.iterator())).toEqual(model.map(show).reverse());

        const it = m.iterator();
        for (let q = 0; q < 400; q++) {
          const pick = rnd.int(4);
          const target = pick === 0 ? model[rnd.int(model.length)]!.key
            : pick === 1 ? rowStartKey(randomRow(rnd))
              : pick === 2 ? rowEndKey(randomRow(rnd))
                : randomEntries(rnd, 1, 0)[0]!.key;
          const lb = lowerBound(model, target);
          it.seek(target);
          if (lb === model.length) expect(it.valid).toBe(false);
          else {
            expect(it.valid).toBe(true);
            expect(show({ key: it.key(), value: it.value() })).toBe(show(model[lb]!));
            // A few steps either way from a seek.
            it.next();
            if (lb + 1 < model.length) expect(toHex(it.key())).toBe(toHex(model[lb + 1]!.key));
            else expect(it.valid).toBe(false);
          }
          const fl = floorIndex(model, target);
          it.seekForPrev(target);
          if (fl < 0) expect(it.valid).toBe(false);
          else {
            expect(it.valid).toBe(true);
            expect(toHex(it.key())).toBe(toHex(model[fl]!.key));
            it.prev();
            if (fl > 0) expect(toHex(it.key())).toBe(toHex(model[fl - 1]!.key));
            else expect(it.valid).toBe(false);
          }
        }
      });
    }
  }

  it('iterators re-created after inserts see them (the read path re-seeks)', () => {
    const rnd = new Random(42);
    const entries = randomEntries(rnd, 2000, 50);
    const m = new Memstore(0);
    const model: Entry[] = [];
    for (let i = 0; i < entries.length; i++) {
      addAll(m, [entries[i]!]);
      model.push(entries[i]!);
      if (i % 250 === 0) {
        const it = m.iterator();
        const target = entries[rnd.int(i + 1)]!.key;
        it.seek(target);
        expect(toHex(it.key())).toBe(toHex(target));
        expect(forward(m.iterator())).toEqual(sorted(model).map(show));
      }
    }
  });

  it('an empty memstore: every positioning is invalid', () => {
    const m = new Memstore(0);
    const it = m.iterator();
    expect(m.empty).toBe(true);
    it.seekToFirst();
    expect(it.valid).toBe(false);
    it.seekToLast();
    expect(it.valid).toBe(false);
    it.seek(rowStartKey(new Uint8Array([1])));
    expect(it.valid).toBe(false);
    it.seekForPrev(rowEndKey(new Uint8Array([1])));
    expect(it.valid).toBe(false);
  });
});

describe('compareKeysAfterPrefix', () => {
  it('orders keys with equal row-prefix numbers as compareInternalKeys does, at any offsets', () => {
    const rnd = new Random(7300);
    const sign = (x: number): number => (x < 0 ? -1 : x > 0 ? 1 : 0);
    const place = (key: Uint8Array, at: number): [Uint8Array, DataView] => {
      const buf = new SharedArrayBuffer(at + key.length + 3);
      const slab = new Uint8Array(buf);
      slab.fill(0xee);
      slab.set(key, at);
      return [slab, new DataView(buf)];
    };
    let compared = 0;
    for (let i = 0; i < 4000; i++) {
      const a = randomEntries(rnd, 1, 0)[0]!.key;
      // b: a's row with a tail changed, cut or extended, or a's key with its cell changed.
      const row = a.subarray(2, 2 + ((a[0]! << 8) | a[1]!));
      const brow = new Uint8Array(Math.max(0, row.length + rnd.range(-3, 4)));
      brow.set(row.subarray(0, brow.length));
      for (let k = 0; k < brow.length; k++) if (k >= ROW_PREFIX_BYTES - 2 && rnd.chance(0.1)) brow[k] = rnd.int(256);
      const b = encodeInternalKey(rnd.chance(0.3) ? row : brow, rnd.chance(0.5) ? 'f' : 'gg', rnd.bytes(rnd.range(0, 5)), rnd.range(0, 5) * 1000, rnd.range(1, 9), KeyKind.Put);
      const [as, av] = place(a, rnd.int(9));
      const [bs, bv] = place(b, rnd.int(9));
      const ao = as.length - 3 - a.length;
      const bo = bs.length - 3 - b.length;
      if ([0, 6, 12].some((f) => rowPrefixAt(as, ao, f) !== rowPrefixAt(bs, bo, f))) continue;
      compared++;
      expect(sign(compareKeysAfterPrefix(as, av, ao, ao + a.length, bs, bv, bo, bo + b.length)), `${toHex(a)} ${toHex(b)}`)
        .toBe(sign(compareInternalKeys(a, b)));
      expect(sign(compareKeysAfterPrefix(bs, bv, bo, bo + b.length, as, av, ao, ao + a.length))).toBe(sign(compareInternalKeys(b, a)));
    }
    expect(compared).toBeGreaterThan(1500);
  });
});

describe('Memstore slabs', () => {
  it('entries larger than a slab get their own; the bytes of every entry stay intact', () => {
    const rnd = new Random(9);
    const m = new Memstore(0, TINY_SLABS);
    const entries: Entry[] = [];
    const kept: Entry[] = [];
    for (let i = 0; i < 500; i++) {
      const big = i % 7 === 0;
      const key = encodeInternalKey(rnd.bytes(big ? 300 : 5), 'f', new Uint8Array(0), 1, i + 1, KeyKind.Put);
      const value = rnd.bytes(big ? rnd.range(200, 5000) : rnd.range(0, 40));
      entries.push({ key, value });
      addAll(m, [{ key, value }]);
      // Views handed out earlier must not change as later entries fill the slabs.
      const it = m.iterator();
      it.seek(key);
      kept.push({ key: it.key(), value: it.value() });
    }
    for (let i = 0; i < entries.length; i++) expect(show(kept[i]!)).toBe(show(entries[i]!));
    expect(forward(m.iterator())).toEqual(sorted(entries).map(show));
    let payload = 0;
    for (const e of entries) payload += e.key.length + e.value.length;
    // Every byte is somewhere; no slab is more than a quarter empty beyond the last one's tail.
    expect(m.arena.allocatedBytes).toBeGreaterThanOrEqual(payload);
    expect(m.arena.allocatedBytes).toBeLessThan(payload * 1.4 + 256);
  });

  it('slabs grow from the first size to the largest', () => {
    const m = new Memstore(0, { slabMinBytes: 1024, slabMaxBytes: 8192 });
    const value = new Uint8Array(100);
    for (let i = 0; i < 1000; i++) {
      m.add(encodeInternalKey(new Uint8Array([i >>> 8, i & 0xff]), 'f', new Uint8Array(0), 1, i + 1, KeyKind.Put), value, i + 1, 1, false);
    }
    const sizes = m.arena.slabs.map((s) => s.length);
    expect(sizes.slice(0, 4)).toEqual([1024, 2048, 4096, 8192]);
    expect(Math.max(...sizes)).toBe(8192);
  });

  it('slab memory is mapped, not taken from the array-buffer allocator (malloc), and shared with fixed-length views', () => {
    // 64 MiB of slabs: malloc'd array buffers would count in arrayBuffers (and stay in the
    // thread's malloc arena once freed); mapped ones do not.
    const before = process.memoryUsage().arrayBuffers;
    const m = new Memstore(0, { slabMinBytes: 1 << 20, slabMaxBytes: 1 << 20 });
    const value = new Uint8Array(1000);
    for (let i = 0; i < 64 * 1024; i++) {
      m.add(encodeInternalKey(new Uint8Array([i >>> 16, (i >>> 8) & 0xff, i & 0xff]), 'f', new Uint8Array(0), 1, i + 1, KeyKind.Put), value, i + 1, 1, false);
    }
    expect(m.arena.allocatedBytes).toBeGreaterThanOrEqual(64 << 20);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(8 << 20);
    const slab = m.arena.slabs[0]!;
    expect(slab.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect([slab.byteOffset, slab.length, m.arena.views[0]!.byteLength]).toEqual([0, 1 << 20, 1 << 20]);
  });

  it('copies what it is given: the caller may reuse its buffers', () => {
    const m = new Memstore(0);
    const key = encodeInternalKey(new Uint8Array([7]), 'f', new Uint8Array(0), 5, 1, KeyKind.Put);
    const value = new Uint8Array([1, 2, 3]);
    const before = show({ key, value });
    m.add(key, value, 1, 5, false);
    key.fill(0);
    value.fill(9);
    expect(forward(m.iterator())).toEqual([before]);
  });
});

describe('Memstore accounting and flush serialization', () => {
  it('sizeBytes, sequence and time ranges, deletions', () => {
    const rnd = new Random(3);
    const entries = randomEntries(rnd, 1000, 100);
    const m = new Memstore(123);
    addAll(m, entries);
    let bytes = 0;
    for (const e of entries) bytes += e.key.length + e.value.length;
    expect(m.sizeBytes).toBe(bytes + entries.length * ENTRY_OVERHEAD_BYTES);
    expect(m.minSeq).toBe(1);
    expect(m.maxSeq).toBe(1000);
    expect(m.minTs).toBe(Math.min(...entries.map((e) => timestampOf(e.key))));
    expect(m.maxTs).toBe(Math.max(...entries.map((e) => timestampOf(e.key))));
    expect(m.deletions).toBe(entries.filter((e) => kindOf(e.key) !== KeyKind.Put).length);
    expect(m.createdAtMs).toBe(123);
  });

  it('addFrom a write batch payload equals add of the decoded entries', () => {
    const rnd = new Random(5);
    const batch = encodeBatch(1, randomMutations(rnd, 200, { maxValue: 64, deleteRow: 0.2 }), 1000, 50);
    const a = new Memstore(0, TINY_SLABS);
    const e = batch.entries;
    for (let i = 0; i < batch.count; i++) a.addFrom(batch.payload, e[4 * i]!, e[4 * i + 1]!, e[4 * i + 2]!, e[4 * i + 3]!);
    const b = new Memstore(0);
    const d = decodeBatch(batch.payload, 'test');
    for (let i = 0; i < d.keys.length; i++) {
      const k = d.keys[i]!;
      b.add(k, d.values[i]!, seqOf(k), timestampOf(k), kindOf(k) !== KeyKind.Put);
    }
    expect(forward(a.iterator())).toEqual(forward(b.iterator()));
    for (const f of ['count', 'sizeBytes', 'minSeq', 'maxSeq', 'minTs', 'maxTs', 'deletions'] as const) expect(a[f]).toBe(b[f]);
    expect(a.minSeq).toBe(1000);
    expect(a.maxSeq).toBe(batch.lastSeq);
    // Recovery reads the same offsets back from the WAL record.
    const back = decodeBatchEntries(batch.payload, 'test');
    expect([back.tableId, back.count]).toEqual([1, batch.count]);
    expect([...back.entries]).toEqual([...batch.entries]);
  });

  for (const slabs of ['tiny slabs', 'default slabs'] as const) {
    it(`addRun of a write batch's runs equals addFrom entry by entry: ${slabs}`, () => {
      const rnd = new Random(23);
      const opts = slabs === 'tiny slabs' ? TINY_SLABS : {};
      const a = new Memstore(0, opts);
      const b = new Memstore(0, opts);
      for (let round = 0; round < 6; round++) {
        const batch = encodeBatch(1, randomMutations(rnd, 150, { maxValue: 300, secondPut: 0.3, deleteRow: 0.1 }), 1 + round * 1000, 50);
        const e = batch.entries;
        // Runs of random lengths (1 entry, a few, hundreds) cover the whole batch.
        for (let from = 0; from < batch.count;) {
          const to = Math.min(batch.count, from + (rnd.chance(0.3) ? 1 : rnd.range(2, 120)));
          a.addRun(batch.payload, e, from, to);
          from = to;
        }
        for (let i = 0; i < batch.count; i++) b.addFrom(batch.payload, e[4 * i]!, e[4 * i + 1]!, e[4 * i + 2]!, e[4 * i + 3]!);
      }
      expect(a.count).toBeGreaterThan(900);
      expect(forward(a.iterator())).toEqual(forward(b.iterator()));
      expect(backward(a.iterator())).toEqual(backward(b.iterator()));
      for (const f of ['count', 'sizeBytes', 'minSeq', 'maxSeq', 'minTs', 'maxTs', 'deletions'] as const) expect(a[f]).toBe(b[f]);
      // The flush input (slab bytes at the indexed offsets) reads back every entry.
      const { slabs: got, index } = a.flushInput();
      const keys: string[] = [];
      for (let i = 0; i < index.length; i += 4) keys.push(toHex(got[index[i]!]!.subarray(index[i + 1]!, index[i + 1]! + index[i + 2]!)));
      expect(keys).toEqual(forward(b.iterator()).map((x) => x.split('=')[0]));
    });
  }

  it('addRun of entries that are not back to back copies them one by one', () => {
    const rows: RowMutation[] = [1, 2, 3].map((k) => ({ key: new Uint8Array([k]), mutations: [{ type: 'put', family: 'f', qualifier: new Uint8Array([k]), value: new Uint8Array(k * 10).fill(k), timestamp: 4 }] }));
    const batch = encodeBatch(1, rows, 10, 0);
    // The same entries, listed out of order: the run is not one piece of the payload.
    const e = batch.entries;
    const shuffled = new Uint32Array([...e.subarray(8, 12), ...e.subarray(0, 4), ...e.subarray(4, 8)]);
    const m = new Memstore(0, TINY_SLABS);
    m.addRun(batch.payload, shuffled, 0, 3);
    const ref = new Memstore(0);
    for (let i = 0; i < 3; i++) ref.addFrom(batch.payload, e[4 * i]!, e[4 * i + 1]!, e[4 * i + 2]!, e[4 * i + 3]!);
    expect(forward(m.iterator())).toEqual(forward(ref.iterator()));
    expect(m.count).toBe(3);
  });

  it('addFrom outside the batch layout (key and value apart) copies both', () => {
    const key = encodeInternalKey(new Uint8Array([5, 6]), 'f', new Uint8Array([1]), 9, 77, KeyKind.DeleteCell);
    const value = new Uint8Array(200).fill(3);
    const buf = new Uint8Array(1000);
    buf.set(key, 0);
    buf.set(value, 500);
    const m = new Memstore(0, TINY_SLABS);
    m.addFrom(buf, 0, key.length, 500, value.length);
    expect(forward(m.iterator())).toEqual([show({ key, value })]);
    expect([m.minSeq, m.maxTs, m.deletions]).toEqual([77, 9, 1]);
  });

  for (const order of ['in order', 'random'] as const) {
    it(`flushInput lists every entry in key order, in the shared slabs: ${order}`, () => {
      const rnd = new Random(11);
      let entries = randomEntries(rnd, 1500, 400);
      if (order !== 'random') entries = sorted(entries);
      const m = new Memstore(0, order === 'random' ? TINY_SLABS : {});
      addAll(m, entries);
      const { slabs, index } = m.flushInput();
      expect(index.length).toBe(4 * entries.length);
      expect(slabs.every((s) => s.buffer instanceof SharedArrayBuffer)).toBe(true);
      const got: string[] = [];
      for (let i = 0; i < index.length; i += 4) {
        const slab = slabs[index[i]!]!;
        const ko = index[i + 1]!;
        const kl = index[i + 2]!;
        const vl = index[i + 3]!;
        // the stored form: [uvarint keyLen][key][uvarint valueLen][value]
        const r = new ByteReader(slab.subarray(ko - (kl < 0x80 ? 1 : 2)));
        expect(r.uvarint()).toBe(kl);
        const key = r.bytes(kl);
        expect(r.uvarint()).toBe(vl);
        got.push(show({ key, value: r.bytes(vl) }));
      }
      expect(got).toEqual(sorted(entries).map(show));
    });
  }
});
