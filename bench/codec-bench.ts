/**
 * codec-bench: micro-benchmark of the compressed hour codec (tsdb/codec/, format in
 * tsdb/SCHEMA.md). Usage:
 *
 *   npx tsx bench/codec-bench.ts [--series N] [--runs R] [--seed S]
 *
 * For each data shape (test/tsdb/codec/codec-data.ts) it builds `series` series-hours of
 * 360 points (10 s interval; default 2000 series = 720,000 points) from a fixed seed,
 * then per run encodes every hour (encodeHourBlock) and decodes every cell into one
 * reused PointBlock (decodeHourBlock, values into its Float64Array). Printed: bytes/point
 * (cell bytes, everything included, over points) and the median of `runs` runs of encode
 * and decode M points/s on one core, with min..max. One warm-up run is not counted.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Random } from '../core/util/random.js';
import { decodeHourBlock, encodeHourBlock } from '../tsdb/codec/hour-codec.js';
import { newPointBlock } from '../tsdb/codec/point-block.js';
import type { PointBlock } from '../tsdb/codec/point-block.js';
import { blockOf, devopsOffsets, SHAPES, walk } from '../test/tsdb/codec/codec-data.js';
import { environment, median, printHeader, sink } from './harness.js';

const { values: args } = parseArgs({
  options: {
    series: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '5' },
    seed: { type: 'string', default: '20261121' },
  },
});
const SERIES = Number(args.series);
const RUNS = Number(args.runs);
const SEED = Number(args.seed);

/** The four target shapes, plus devops with jittered / missing timestamps for reference. */
const WORKLOADS: Record<string, (rng: Random) => PointBlock> = {
  ...SHAPES,
  '2-decimal, 5% missing': (rng) => {
    const o = devopsOffsets(rng, { missing: 0.05 });
    return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
  },
  '2-decimal, +-5 ms jitter': (rng) => {
    const o = devopsOffsets(rng, { jitterMs: 5 });
    return blockOf(o, walk(rng, o.length, 2), new Uint8Array(o.length));
  },
};

interface Row {
  name: string;
  bytesPerPoint: number;
  encode: number[];
  decode: number[];
}

function runShape(name: string, make: (rng: Random) => PointBlock): Row {
  const rng = new Random(SEED);
  const blocks = Array.from({ length: SERIES }, () => make(rng));
  const points = blocks.reduce((s, b) => s + b.count, 0);
  let cells: Uint8Array[] = [];
  const out = newPointBlock(4096);
  const row: Row = { name, bytesPerPoint: 0, encode: [], decode: [] };
  for (let run = 0; run <= RUNS; run++) {
    let t0 = performance.now();
    cells = blocks.map(encodeHourBlock);
    const enc = (performance.now() - t0) / 1000;
    t0 = performance.now();
    for (const c of cells) {
      const b = decodeHourBlock(c, out);
      sink.value += b.values[b.count - 1]! + b.offsetsMs[b.count - 1]!;
    }
    const dec = (performance.now() - t0) / 1000;
    if (run === 0) continue; // warm-up
    row.encode.push(points / enc / 1e6);
    row.decode.push(points / dec / 1e6);
  }
  row.bytesPerPoint = cells.reduce((s, c) => s + c.length, 0) / points;
  return row;
}

const env = environment(os.tmpdir());
printHeader({
  benchmark: 'codec-bench (hour codec)', date: env.date, commit: env.commit, node: env.node, cpu: env.cpu,
  cpus: env.cpus, loadAvg1m: env.loadAvg1m, series: SERIES, pointsPerSeries: 360, runs: RUNS, seed: SEED,
});
const rows: Row[] = [];
for (const [name, make] of Object.entries(WORKLOADS)) {
  const row = runShape(name, make);
  rows.push(row);
  const fmt = (xs: number[]): string => `${median(xs).toFixed(1).padStart(6)} (${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)})`;
  console.log(`${name.padEnd(26)} ${row.bytesPerPoint.toFixed(3).padStart(7)} B/pt   encode ${fmt(row.encode)} M pt/s   decode ${fmt(row.decode)} M pt/s`);
}
console.log('-'.repeat(100));
console.log('| shape | bytes/point | encode M points/s (median) | decode M points/s (median) |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${r.bytesPerPoint.toFixed(3)} | ${median(r.encode).toFixed(1)} | ${median(r.decode).toFixed(1)} |`);
console.log(`(sink ${sink.value > 0 ? 'ok' : '0'})`);
