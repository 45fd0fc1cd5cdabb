/**
 * A deterministic TSBS-like "devops cpu" dataset for the ingest benchmarks:
 * `hosts` hosts (default 100) × 10 cpu metrics (or the first `metrics` of them) × `steps`
 * timestamps 10 s apart (default 24 h = 8,640 steps) = 8,640,000 points, 1,000 series with
 * 8 tags each. bench/cardinality.ts takes millions of hosts, 10 minutes apart.
 *
 *   metrics  cpu.usage_user, usage_system, usage_idle, usage_nice, usage_iowait,
 *            usage_irq, usage_softirq, usage_steal, usage_guest, usage_guest_nice
 *   tags     hostname=host_<i>, region, datacenter, rack, os, arch, team, service: drawn
 *            per host from TSBS's value lists by a PRNG seeded with (seed, host), so a host
 *            keeps its tags at any scale
 *   values   per series a clamped random walk v = clamp(v + N(0,1), 0, 100), starting at
 *            U(0,100), from one seeded PRNG consumed in generation order (xoshiro128**,
 *            core/util/random.ts; Box-Muller normals). `full`: the float64 as is (~52
 *            random mantissa bits, shortest round-trip text); `2dec`: rounded to 2 decimals
 *            (the walk itself stays in full precision)
 *   order    as TSBS: by timestamp, then host, then metric
 *   start    2026-01-01T00:00:00Z (in the past: every hour is closed and compactable)
 *
 * The generator streams: it yields chunks of `batchPoints` values (a Float64Array plus
 * the index of the first point) and keeps only the 1,000 walk states; the formatters turn
 * a chunk into IncomingPoint objects (sharing one tags array and series text per series),
 * telnet `put` lines, a JSON /api/put body or a msgpack body; `telnetLean` writes the same
 * telnet lines without per-series objects (for millions of series). Integral values (a walk
 * clamped at 0 or 100, a 2-decimal value like 45) come out as integers in every format
 * (`45` in text, a msgpack int, isInt in-process), as a JS client would send them.
 */
import { pack } from 'msgpackr';
import { Random } from '../core/util/random.js';
import type { IncomingPoint } from '../tsdb/write/data-point.js';

export type ValueMode = 'full' | '2dec';

export interface DevopsOptions {
  readonly hosts: number;
  /** Timestamps per series. */
  readonly steps: number;
  readonly intervalSec: number;
  /** First timestamp, in seconds. */
  readonly startSec: number;
  readonly values: ValueMode;
  /** How many of METRICS each host has (the first ones; 10 = all). */
  readonly metrics: number;
  readonly seed: number;
  /** Points per chunk (= per HTTP body / telnet write unit). */
  readonly batchPoints: number;
}

export const METRICS: readonly string[] = [
  'cpu.usage_user', 'cpu.usage_system', 'cpu.usage_idle', 'cpu.usage_nice', 'cpu.usage_iowait',
  'cpu.usage_irq', 'cpu.usage_softirq', 'cpu.usage_steal', 'cpu.usage_guest', 'cpu.usage_guest_nice',
];

/** 2026-01-01T00:00:00Z. */
export const DEFAULT_START_SEC = Date.UTC(2026, 0, 1) / 1000;
export const FULL_HOSTS = 100;
export const FULL_HOURS = 24;
export const INTERVAL_SEC = 10;

export const DEFAULT_DEVOPS: DevopsOptions = {
  hosts: FULL_HOSTS,
  steps: (FULL_HOURS * 3600) / INTERVAL_SEC,
  intervalSec: INTERVAL_SEC,
  startSec: DEFAULT_START_SEC,
  values: 'full',
  metrics: 10,
  seed: 20260101,
  batchPoints: 5000,
};

/**
 * The options for `--scale x` (a fraction of the 24 hours; the 100 hosts stay, so the
 * series count and rows per hour are those of the full set), or explicit hosts/hours.
 */
export function devopsOptions(o: { scale?: number; hosts?: number; hours?: number; values?: ValueMode; metrics?: number; seed?: number; batchPoints?: number }): DevopsOptions {
  const hours = o.hours ?? FULL_HOURS * (o.scale ?? 1);
  const steps = Math.max(1, Math.round((hours * 3600) / INTERVAL_SEC));
  return {
    ...DEFAULT_DEVOPS,
    hosts: o.hosts ?? FULL_HOSTS,
    steps,
    ...(o.values === undefined ? {} : { values: o.values }),
    ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
    ...(o.seed === undefined ? {} : { seed: o.seed }),
    ...(o.batchPoints === undefined ? {} : { batchPoints: o.batchPoints }),
  };
}

export function seriesCount(o: DevopsOptions): number {
  return o.hosts * o.metrics;
}

/** The metric names of the dataset. */
export function metricNames(o: DevopsOptions): readonly string[] {
  return METRICS.slice(0, o.metrics);
}

export function totalPoints(o: DevopsOptions): number {
  return seriesCount(o) * o.steps;
}

/** A short name for file names and result headers: `100h-8640s-full-seed20260101-b5000`. */
export function datasetKey(o: DevopsOptions): string {
  const shape = `${o.hosts}h-${o.steps}s${o.intervalSec === INTERVAL_SEC ? '' : `-i${o.intervalSec}`}${o.metrics === METRICS.length ? '' : `-m${o.metrics}`}`;
  return `${shape}-${o.values}-seed${o.seed}-b${o.batchPoints}`;
}

export function describeDataset(o: DevopsOptions): Record<string, string | number> {
  return {
    name: 'devops-cpu (TSBS-like)',
    hosts: o.hosts,
    metrics: o.metrics,
    series: seriesCount(o),
    tagsPerSeries: 8,
    steps: o.steps,
    hours: (o.steps * o.intervalSec) / 3600,
    intervalSec: o.intervalSec,
    start: new Date(o.startSec * 1000).toISOString(),
    points: totalPoints(o),
    values: o.values === 'full' ? 'full-precision float64 random walk' : 'random walk rounded to 2 decimals',
    seed: o.seed,
    batchPoints: o.batchPoints,
    order: 'timestamp, host, metric',
  };
}

// ---------------------------------------------------------------------------------------
// Tags (TSBS's devops value lists)

const REGIONS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['us-east-1', ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1e']],
  ['us-west-1', ['us-west-1a', 'us-west-1b']],
  ['us-west-2', ['us-west-2a', 'us-west-2b', 'us-west-2c']],
  ['eu-west-1', ['eu-west-1a', 'eu-west-1b', 'eu-west-1c']],
  ['eu-central-1', ['eu-central-1a', 'eu-central-1b']],
  ['ap-southeast-1', ['ap-southeast-1a', 'ap-southeast-1b']],
  ['ap-southeast-2', ['ap-southeast-2a', 'ap-southeast-2b']],
  ['ap-northeast-1', ['ap-northeast-1a', 'ap-northeast-1c']],
  ['sa-east-1', ['sa-east-1a', 'sa-east-1b', 'sa-east-1c']],
];
const OSES = ['Ubuntu16.10', 'Ubuntu16.04LTS', 'Ubuntu15.10'];
const ARCHES = ['x64', 'x86'];
const TEAMS = ['SF', 'NYC', 'LON', 'CHI'];

/** The 8 tags of host `h`, in the order sent. */
export function hostTags(h: number, seed: number = DEFAULT_DEVOPS.seed): Array<[string, string]> {
  const r = new Random((seed ^ Math.imul(h + 1, 0x9e3779b1)) >>> 0);
  const [region, dcs] = REGIONS[r.int(REGIONS.length)]!;
  return [
    ['hostname', `host_${h}`],
    ['region', region],
    ['datacenter', dcs[r.int(dcs.length)]!],
    ['rack', String(r.int(100))],
    ['os', OSES[r.int(OSES.length)]!],
    ['arch', ARCHES[r.int(ARCHES.length)]!],
    ['team', TEAMS[r.int(TEAMS.length)]!],
    ['service', String(r.int(20))],
  ];
}

/** Per-series strings and objects, built once (series index = host * 10 + metric). */
export interface SeriesInfo {
  readonly metric: string;
  readonly tags: ReadonlyArray<readonly [string, string]>;
  readonly tagObject: Readonly<Record<string, string>>;
  /** `metric k=v k=v…`, as the telnet parser builds it (IncomingPoint.seriesText). */
  readonly seriesText: string;
  /** `put <metric> ` */
  readonly telnetHead: string;
  /** ` k=v k=v…\n` */
  readonly telnetTail: string;
  /** `{"metric":"…","tags":{…},"timestamp":` */
  readonly jsonHead: string;
}

export function seriesInfo(o: DevopsOptions): SeriesInfo[] {
  const out: SeriesInfo[] = [];
  for (let h = 0; h < o.hosts; h++) {
    const tags = hostTags(h, o.seed);
    const tagText = tags.map(([k, v]) => `${k}=${v}`).join(' ');
    const tagObject = Object.fromEntries(tags);
    for (const metric of metricNames(o)) {
      out.push({
        metric,
        tags,
        tagObject,
        seriesText: `${metric} ${tagText}`,
        telnetHead: `put ${metric} `,
        telnetTail: ` ${tagText}\n`,
        jsonHead: `{"metric":${JSON.stringify(metric)},"tags":${JSON.stringify(tagObject)},"timestamp":`,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Generation

/** `n` consecutive points starting at global index `start` (point i: step ⌊i/S⌋, series i mod S). */
export interface DevopsChunk {
  readonly start: number;
  readonly n: number;
  readonly values: Float64Array;
}

/** Streams the dataset in chunks of `batchPoints` (the last one may be shorter). */
export function* devopsChunks(o: DevopsOptions): Generator<DevopsChunk> {
  const s = seriesCount(o);
  const total = s * o.steps;
  const rnd = new Random(o.seed);
  const walk = new Float64Array(s);
  for (let i = 0; i < s; i++) walk[i] = rnd.next() * 100;
  const round = o.values === '2dec';
  let spare = NaN;
  const normal = (): number => {
    if (spare === spare) {
      const z = spare;
      spare = NaN;
      return z;
    }
    let u = rnd.next();
    while (u === 0) u = rnd.next();
    const v = rnd.next();
    const m = Math.sqrt(-2 * Math.log(u));
    spare = m * Math.sin(2 * Math.PI * v);
    return m * Math.cos(2 * Math.PI * v);
  };
  let series = 0;
  for (let start = 0; start < total; start += o.batchPoints) {
    const n = Math.min(o.batchPoints, total - start);
    const values = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      let v = walk[series]! + normal();
      v = v < 0 ? 0 : v > 100 ? 100 : v;
      walk[series] = v;
      values[j] = round ? Math.round(v * 100) / 100 : v;
      if (++series === s) series = 0;
    }
    yield { start, n, values };
  }
}

// ---------------------------------------------------------------------------------------
// Formats

export class DevopsFormatter {
  readonly options: DevopsOptions;
  readonly series: readonly SeriesInfo[];
  private readonly s: number;

  constructor(o: DevopsOptions) {
    this.options = o;
    this.series = seriesInfo(o);
    this.s = this.series.length;
  }

  timestampOf(i: number): number {
    return this.options.startSec + Math.floor(i / this.s) * this.options.intervalSec;
  }

  /** IncomingPoint objects (seconds; isInt for integral values, as the JSON path types them). */
  points(c: DevopsChunk): IncomingPoint[] {
    const out: IncomingPoint[] = new Array(c.n);
    const { s, series } = this;
    let si = c.start % s;
    let ts = this.timestampOf(c.start);
    for (let j = 0; j < c.n; j++) {
      const info = series[si]!;
      const value = c.values[j]!;
      out[j] = { metric: info.metric, timestamp: ts, value, isInt: Number.isSafeInteger(value), tags: info.tags, seriesText: info.seriesText };
      if (++si === s) {
        si = 0;
        ts += this.options.intervalSec;
      }
    }
    return out;
  }

  /** `put <metric> <ts> <value> k=v…\n` lines. */
  telnet(c: DevopsChunk): string {
    const { s, series } = this;
    let si = c.start % s;
    let ts = this.timestampOf(c.start);
    let out = '';
    for (let j = 0; j < c.n; j++) {
      const info = series[si]!;
      out += info.telnetHead + ts + ' ' + c.values[j]! + info.telnetTail;
      if (++si === s) {
        si = 0;
        ts += this.options.intervalSec;
      }
    }
    return out;
  }

  /** A JSON array body for /api/put. */
  json(c: DevopsChunk): string {
    const { s, series } = this;
    let si = c.start % s;
    let ts = this.timestampOf(c.start);
    let out = '[';
    for (let j = 0; j < c.n; j++) {
      const info = series[si]!;
      out += (j === 0 ? '' : ',') + info.jsonHead + ts + ',"value":' + c.values[j]! + '}';
      if (++si === s) {
        si = 0;
        ts += this.options.intervalSec;
      }
    }
    return out + ']';
  }

  /** A msgpack body (msgpackr `pack` of the same array of objects). */
  msgpack(c: DevopsChunk): Buffer {
    const { s, series } = this;
    let si = c.start % s;
    let ts = this.timestampOf(c.start);
    const arr: Array<{ metric: string; timestamp: number; value: number; tags: Readonly<Record<string, string>> }> = new Array(c.n);
    for (let j = 0; j < c.n; j++) {
      const info = series[si]!;
      arr[j] = { metric: info.metric, timestamp: ts, value: c.values[j]!, tags: info.tagObject };
      if (++si === s) {
        si = 0;
        ts += this.options.intervalSec;
      }
    }
    return pack(arr);
  }
}

/**
 * The telnet lines of DevopsFormatter.telnet, built without per-series objects: a host's tag
 * text is made once per run of its metrics, so memory stays flat at millions of series.
 */
export function telnetLean(o: DevopsOptions, c: DevopsChunk): string {
  const m = o.metrics;
  const s = seriesCount(o);
  let si = c.start % s;
  let ts = o.startSec + Math.floor(c.start / s) * o.intervalSec;
  let host = -1;
  let tail = '';
  let out = '';
  for (let j = 0; j < c.n; j++) {
    const h = Math.floor(si / m);
    if (h !== host) {
      host = h;
      tail = ' ' + hostTags(h, o.seed).map(([k, v]) => `${k}=${v}`).join(' ') + '\n';
    }
    out += 'put ' + METRICS[si % m]! + ' ' + ts + ' ' + c.values[j]! + tail;
    if (++si === s) {
      si = 0;
      ts += o.intervalSec;
    }
  }
  return out;
}

export type WireFormat = 'telnet' | 'json' | 'msgpack';

/** The bytes of one chunk in a wire format. */
export function encodeChunk(f: DevopsFormatter, format: WireFormat, c: DevopsChunk): Buffer {
  switch (format) {
    case 'telnet':
      return Buffer.from(f.telnet(c), 'latin1');
    case 'json':
      return Buffer.from(f.json(c), 'latin1');
    case 'msgpack':
      return f.msgpack(c);
  }
}
