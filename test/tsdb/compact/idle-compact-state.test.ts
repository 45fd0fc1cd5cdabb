/**
 * A server left alone after a load reaches its compact state by itself: small memstores
 * flush many times during the load (so rows get several compressed cells and regions several
 * files), then with no call from anyone the store's idle flush and compactions bring the
 * data table's files within a stated bound of the hour codec's own size. Real file system,
 * flushes and compactions on the job worker (which imports the row transform's module).
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/embedded/embedded-store.js';
import { encodeHourBlock } from '../../../tsdb/codec/hour-codec.js';
import { appendPoint, newPointBlock } from '../../../tsdb/codec/point-block.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { pt } from '../helpers/tsdb-fixture.js';

const HOUR_S = 3600;
const SERIES = 100;
const HOURS = 2;
const STEP_S = 10;
/** The bound: the data table's files at most this × the codec's bytes, plus a file's fixed cost per region. */
const BOUND = 1.25;
const PER_REGION_BYTES = 1024;

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const value = (s: number, i: number): number => Math.round((50 + 20 * Math.sin(i / 30 + s)) * 100) / 100;

describe('a server left alone', () => {
  it('reaches its compact state within seconds: data files within 1.25x the codec size plus 1 KiB a region', async () => {
    dir = await mkdtemp(join(tmpdir(), 'horae-idle-'));
    const t0 = Math.floor(Date.now() / 1000 / HOUR_S) * HOUR_S - HOURS * HOUR_S;
    const store = await openEmbeddedStore({
      dir, backgroundThreads: 1, memstoreFlushBytes: 8 * 1024, memstoreIdleFlushMs: 300, maintenanceIntervalMs: 200, walFileBytes: 256 * 1024,
    });
    const tsdb = await Tsdb.open(store, { config: { durability: 'buffered' } });
    // The load: every series' points in time order, a minute of them per call.
    let codecBytes = 0;
    const per = HOUR_S / STEP_S;
    for (let s = 0; s < SERIES; s++) {
      for (let h = 0; h < HOURS; h++) {
        const b = newPointBlock(per);
        for (let i = 0; i < per; i++) appendPoint(b, i * STEP_S * 1000, value(s, h * per + i), false);
        codecBytes += encodeHourBlock(b).length;
      }
    }
    for (let i = 0; i < HOURS * per; i += 6) {
      const batch = [];
      for (let s = 0; s < SERIES; s++) for (let k = i; k < i + 6; k++) batch.push(pt('cpu', t0 + k * STEP_S, value(s, k), { host: `h${s}` }, false));
      await tsdb.ingest.write(batch);
    }
    // Left alone: nothing but the store's own timers.
    const regions = (await tsdb.data.regions()).length;
    const bound = BOUND * codecBytes + PER_REGION_BYTES * regions;
    const dataBytes = async (): Promise<{ bytes: number; memstore: number }> => {
      let bytes = 0;
      let memstore = 0;
      for (const r of await tsdb.data.regions()) {
        bytes += r.stats.sizeBytes - r.stats.memstoreBytes;
        memstore += r.stats.memstoreBytes;
      }
      return { bytes, memstore };
    };
    const started = Date.now();
    let now = await dataBytes();
    while (Date.now() - started < 20_000 && (now.memstore > 0 || now.bytes > bound)) {
      await new Promise((r) => setTimeout(r, 200));
      now = await dataBytes();
    }
    let du = 0;
    for (const f of await readdir(dir)) du += (await stat(join(dir, f)).catch(() => ({ size: 0 }))).size; // a file may go meanwhile
    const points = SERIES * HOURS * per;
    console.log(`idle compact state after ${Date.now() - started} ms: data files ${now.bytes} B (${(now.bytes / points).toFixed(2)} B/point), codec ${codecBytes} B (${(codecBytes / points).toFixed(2)} B/point), bound ${Math.round(bound)} B, whole directory ${du} B`);
    const st = await store.stats();
    console.log(`flushes ${st.flushesDone}, compactions ${st.compactionsDone}, files ${st.files}`);
    expect(st.flushesDone, 'the load flushed many times').toBeGreaterThan(20);
    expect(now.memstore).toBe(0);
    expect(now.bytes).toBeLessThanOrEqual(bound);
    await tsdb.close();
    await store.close();
  }, 60_000);
});
