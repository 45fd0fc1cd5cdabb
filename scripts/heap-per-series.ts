/**
 * Heap per active series: admits N series in-process through the telnet write path (the
 * memory store, the catalog as `horae serve` builds it), one point each, three rounds so
 * every cache is warm, then reports per series: the JS heap all of it holds (heapUsed after
 * a full collection, less the heap before: the memory store's rows are on the heap too),
 * the heap the catalog's caches free when dropped (dropCaches: series entries, texts and
 * byte keys, UID caches, the index copy, names, last values; the newest-hour hints are
 * only distrusted and the dirty rows are work, so neither is in it), and each catalog
 * structure's bytes by its own accounting. Not a benchmark: a measurement of memory, run with
 *
 *   node --expose-gc --import tsx scripts/heap-per-series.ts [series, default 200000]
 *
 * Series as TSBS devops shapes them: 10 metrics a host, 10 tags a host.
 */
import { openMemoryStore } from '../core/index.js';
import { Tsdb } from '../tsdb/tsdb.js';
import { putLineSource } from '../tsdb/server/telnet/tsdb-telnet-backend.js';
import { PutLines } from '../tsdb/server/telnet/telnet-backend.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const N = Number(process.argv[2] ?? 200_000);
const METRICS = ['cpu.usage_user', 'cpu.usage_system', 'cpu.usage_idle', 'mem.used', 'mem.free', 'disk.used', 'disk.free', 'net.bytes_recv', 'net.bytes_sent', 'kernel.interrupts'];
const hosts = Math.ceil(N / METRICS.length);
const T0 = 1_767_225_600; // 2026-01-01

const store = await openMemoryStore({});
const tsdb = await Tsdb.open(store, { background: false, config: { catalogMemoryBytes: 4 * 1024 ** 3, saltBuckets: 20, maxTags: 10 } });
const enc = new TextEncoder();
const lineOf = (h: number, m: string, t: number): string =>
  `put ${m} ${t} ${h % 100} hostname=host_${h} region=eu-west-${h % 3} datacenter=eu-west-${h % 3}${'abc'[h % 3]} rack=${h % 100} os=Ubuntu16.10 arch=x64 team=SF service=${h % 20} service_version=${h % 2} service_environment=production\n`;
const before = heap();
for (let round = 0; round < 3; round++) {
  for (let h0 = 0; h0 < hosts; h0 += 500) {
    const text = [];
    for (let h = h0; h < Math.min(hosts, h0 + 500); h++) for (const m of METRICS) text.push(lineOf(h, m, T0 + round * 600));
    const buf = enc.encode(text.join(''));
    const lines = new PutLines();
    for (let s = 0, e = buf.indexOf(10); e >= 0; s = e + 1, e = buf.indexOf(10, s)) lines.add(buf, s, e);
    const out = await tsdb.ingest.put(putLineSource(lines), { admit: 'wait' });
    if (out.some((o) => o !== undefined)) throw new Error(`refused: ${String(out.find((o) => o !== undefined))}`);
  }
}
const after = heap();
const accounted = tsdb.catalog.memory.stats();
const used = tsdb.catalog.memory.usedBytes();
// The heap each structure frees, dropped one at a time (to check its estimate), then the rest.
const c = tsdb.catalog;
const freed: Record<string, number> = {};
let last = after;
for (const [name, drop] of [
  ['seriesEntries', () => c.series.clear()],
  ['uidCaches', () => [c.metrics, c.tagks, c.tagvs].forEach((t) => t.dropCaches())],
  ['index', () => c.index.forgetAll()],
] as const) {
  drop();
  const h = heap();
  freed[name] = Math.round((last - h) / (hosts * METRICS.length));
  last = h;
}
tsdb.dropCaches();
const dropped = heap();
const series = hosts * METRICS.length;
const structures = Object.fromEntries(accounted.map((s) => [s.name, { bytes: s.bytes, entries: s.entries, perSeries: Math.round(s.bytes / series) }]));
process.stdout.write(`${JSON.stringify({
  series,
  heapBytesPerSeries: Math.round((after - before) / series),
  cachesHeapBytesPerSeries: Math.round((after - dropped) / series),
  accountedBytesPerSeries: Math.round(used / series),
  freedBytesPerSeries: { ...freed, rest: Math.round((last - dropped) / series) },
  structures,
}, null, 1)}\n`);
await tsdb.close();
await store.close();
