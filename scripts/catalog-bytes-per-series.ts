/**
 * Bytes per series of each per-series structure of the catalog, measured in-process on
 * the structures themselves (no store, no server): N series as TSBS devops shapes them
 * (10 metrics a host, 10 tags), put into one structure at a time as the write path and
 * /api/query/last put them, and the JS heap it then holds (heapUsed after full
 * collections with the array buffers, less the same before) beside the bytes it accounts for itself. Run with
 *
 *   node --expose-gc --import tsx scripts/catalog-bytes-per-series.ts [series, default 200000]
 *
 * Not a benchmark (no timing): a measurement of memory.
 */
import { SeriesEntries } from '../tsdb/catalog/series-entries.js';
import { ActiveSeries } from '../tsdb/meta/active-series.js';
import { LastValues } from '../tsdb/meta/last-values.js';
import { NewestHours } from '../tsdb/meta/newest-hours.js';
import { newSeriesEntry } from '../tsdb/write/write-group.js';
import type { SeriesEntry } from '../tsdb/write/write-group.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const heap = (): number => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers; // typed arrays past 64 bytes keep their bytes outside the JS heap
};

const N = Number(process.argv[2] ?? 200_000);
const BIG = 64 * 1024 ** 3;
const METRICS = ['cpu.usage_user', 'cpu.usage_system', 'cpu.usage_idle', 'mem.used', 'mem.free', 'disk.used', 'disk.free', 'net.bytes_recv', 'net.bytes_sent', 'kernel.interrupts'];
const HOUR = 1_767_225_600;

/** Series i's row-key template: salt 1, metric 3, base time 4 (0), 10 tag pairs of 3 + 3. */
function template(i: number): Uint8Array {
  const t = new Uint8Array(1 + 3 + 4 + 60);
  const h = Math.floor(i / METRICS.length);
  t[0] = i % 20;
  t[3] = i % METRICS.length;
  for (let p = 0; p < 10; p++) {
    const o = 8 + p * 6;
    t[o + 2] = p + 1;
    const v = p === 0 ? h : (h % (p * 7 + 3)) + p * 1000;
    t[o + 3] = (v >>> 16) & 0xff;
    t[o + 4] = (v >>> 8) & 0xff;
    t[o + 5] = v & 0xff;
  }
  return t;
}

function tsuidKey(t: Uint8Array): string {
  return Buffer.from([...t.subarray(1, 4), ...t.subarray(8)]).toString('latin1');
}

/** The telnet text of series i (what a put line holds between the timestamp and the value, reordered as the parser keeps it). */
function text(i: number): string {
  const h = Math.floor(i / METRICS.length);
  return `${METRICS[i % METRICS.length]} hostname=host_${h} region=eu-west-${h % 3} datacenter=eu-west-${h % 3}${'abc'[h % 3]} rack=${h % 100} os=Ubuntu16.10 arch=x64 team=SF service=${h % 20} service_version=${h % 2} service_environment=production`;
}

interface Row {
  readonly heapBytesPerSeries: number;
  readonly accountedBytesPerSeries: number;
}

const out: Record<string, Row> = {};
function measure(name: string, fill: () => { bytes: () => number; keep: unknown }): void {
  const before = heap();
  const r = fill();
  const after = heap();
  out[name] = { heapBytesPerSeries: Math.round((after - before) / N), accountedBytesPerSeries: Math.round(r.bytes() / N) };
  (globalThis as { keep?: unknown }).keep = r.keep; // held until measured
  (globalThis as { keep?: unknown }).keep = undefined;
}

const enc = new TextEncoder();
measure('seriesEntries', () => {
  const t = new SeriesEntries<SeriesEntry>(BIG);
  for (let i = 0; i < N; i++) {
    const tp = template(i);
    t.intern(newSeriesEntry(tp, tsuidKey(tp)));
  }
  return { bytes: () => t.heldBytes, keep: t };
});
// A telnet series: its entry and its byte key (its text is not kept: ingest.ts put).
measure('seriesEntries+byteKeys', () => {
  const t = new SeriesEntries<SeriesEntry>(BIG);
  const cache = t.bytes('telnet');
  for (let i = 0; i < N; i++) {
    const tp = template(i);
    const e = t.intern(newSeriesEntry(tp, tsuidKey(tp)));
    const s = text(i);
    const b = enc.encode(s);
    const sp = b.indexOf(0x20);
    cache.set(b, 0, sp, sp + 1, b.length, e);
  }
  cache.releaseView();
  return { bytes: () => t.heldBytes, keep: t };
});
// A series written through the parsed path (no byte form): its entry and its text.
measure('seriesEntries+texts', () => {
  const t = new SeriesEntries<SeriesEntry>(BIG);
  for (let i = 0; i < N; i++) {
    const tp = template(i);
    t.setText(text(i), t.intern(newSeriesEntry(tp, tsuidKey(tp))));
  }
  return { bytes: () => t.heldBytes, keep: t };
});
measure('newestHours', () => {
  const h = new NewestHours(() => false, BIG);
  for (let i = 0; i < N; i++) h.written(tsuidKey(template(i)), HOUR);
  return { bytes: () => h.bytes, keep: h };
});
measure('lastValues', () => {
  const l = new LastValues(BIG, 3);
  for (let i = 0; i < N; i++) {
    const k = tsuidKey(template(i));
    const token = l.begin([k]);
    l.finish(k, { ts: HOUR * 1000, value: i, isInt: true }, HOUR, token);
  }
  return { bytes: () => l.bytes, keep: l };
});
measure('index', () => {
  const a = new ActiveSeries({ maxBytes: BIG, idleMs: 0 });
  for (let i = 0; i < N; i++) {
    const tp = template(i);
    a.add(Uint8Array.from([...tp.subarray(1, 4), ...tp.subarray(8)]), 0);
  }
  return { bytes: () => a.bytes(), keep: a };
});
process.stdout.write(`${JSON.stringify({ series: N, node: process.version, structures: out }, null, 1)}\n`);
