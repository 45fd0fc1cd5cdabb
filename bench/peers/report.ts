/**
 * The side-by-side report of `bench:record`: the figures of every system (medians over the
 * runs, bench/peers/run.ts `summarize`; the query sets, bench/peers/query-run.ts, medians
 * over the runs too) as rows of one table, with Horae / peer ratios. A ratio is Horae's
 * figure divided by the peer's; whether Horae is ahead depends on the figure: higher is
 * better for points/s and requests/s, lower for everything else (CPU, RSS, bytes, time).
 *
 * Pure functions of recorded figures (test/bench/report.test.ts feeds it a recorded run).
 */
import { median } from '../harness.js';
import type { Summary } from './run.js';
import type { QuerySetResult } from './query-run.js';

export type Better = 'higher' | 'lower';

/** One measured figure of every system that has it. */
export interface Figure {
  /** What was measured on: 'telnet ×4, full', 'q1', ... */
  readonly group: string;
  readonly name: string;
  readonly better: Better;
  readonly values: Readonly<Record<string, number>>;
}

export interface Ratio {
  readonly group: string;
  readonly name: string;
  readonly peer: string;
  readonly horae: number;
  readonly peerValue: number;
  /** horae / peerValue. */
  readonly ratio: number;
  readonly horaeAhead: boolean;
}

export const SYSTEM_NAMES: Readonly<Record<string, string>> = { horae: 'Horae', victoriametrics: 'VictoriaMetrics', influxdb: 'InfluxDB' };

const WORKLOAD_LABELS: Readonly<Record<string, string>> = {
  'ingest-telnet': 'telnet ×4',
  'ingest-http-json': 'HTTP JSON 5k ×4',
  'ingest-http-msgpack': 'HTTP msgpack 5k ×4',
};

/** Ingest figures per (workload, values), in the order first seen in `summary`. */
export function ingestFigures(summary: readonly Summary[]): Figure[] {
  const groups = new Map<string, Summary[]>();
  for (const s of summary) {
    const k = `${WORKLOAD_LABELS[s.workload] ?? s.workload}, ${s.values}`;
    const g = groups.get(k);
    if (g === undefined) groups.set(k, [s]);
    else g.push(s);
  }
  const out: Figure[] = [];
  for (const [group, g] of groups) {
    const of = (f: (s: Summary) => number | undefined): Record<string, number> => {
      const v: Record<string, number> = {};
      for (const s of g) {
        const x = f(s);
        if (x !== undefined && Number.isFinite(x)) v[s.system] = x;
      }
      return v;
    };
    const wait = g[0]!.waitSeconds;
    const add = (name: string, better: Better, f: (s: Summary) => number | undefined): void => {
      const values = of(f);
      if (Object.keys(values).length > 0) out.push({ group, name, better, values });
    };
    add('points/s until all queryable', 'higher', (s) => s.pointsPerSec.median);
    add('server CPU-s / M points', 'lower', (s) => s.serverCpuPerM);
    add('bytes/point on disk (du) after the load', 'lower', (s) => s.bytesPerPointAfterLoad);
    add(`bytes/point on disk (du) ${wait} s after it`, 'lower', (s) => s.bytesPerPointAfterWait);
    add('bytes/point on disk (du) after a clean stop', 'lower', (s) => s.bytesPerPointAfterStop);
    add(`CPU-s while idle for ${wait} s`, 'lower', (s) => s.idleCpuSeconds);
    add('RSS MiB after the load', 'lower', (s) => s.rssAfterLoadMiB);
    add(`RSS MiB ${wait} s after it`, 'lower', (s) => s.rssAfterWaitMiB);
    add('PSS MiB after the load (shared pages once)', 'lower', (s) => s.pssAfterLoadMiB);
    add(`PSS MiB ${wait} s after it`, 'lower', (s) => s.pssAfterWaitMiB);
    add('ready after a restart, s', 'lower', (s) => s.readySeconds);
  }
  return out;
}

/** Query figures per query id: median latency and requests/s, each the median over the runs of a system. */
export function queryFigures(sets: readonly QuerySetResult[]): Figure[] {
  const ids: string[] = [];
  for (const s of sets) for (const q of s.queries) if (!ids.includes(q.id)) ids.push(q.id);
  const out: Figure[] = [];
  for (const id of ids) {
    const lats = new Map<string, number[]>();
    const rpss = new Map<string, number[]>();
    const push = (m: Map<string, number[]>, k: string, x: number): void => void (m.get(k) ?? m.set(k, []).get(k)!).push(x);
    for (const s of sets) {
      const q = s.queries.find((x) => x.id === id);
      if (q === undefined) continue;
      // A failed query has no figures (NaN): left out, its answer check says why.
      if (Number.isFinite(q.medianMs)) push(lats, s.system, q.medianMs);
      if (Number.isFinite(q.requestsPerSec)) push(rpss, s.system, q.requestsPerSec);
    }
    const lat = Object.fromEntries([...lats].map(([k, xs]) => [k, median(xs)]));
    const rps = Object.fromEntries([...rpss].map(([k, xs]) => [k, median(xs)]));
    const conc = sets[0]?.conc ?? 0;
    out.push({ group: id, name: 'median latency ms', better: 'lower', values: lat });
    out.push({ group: id, name: `requests/s (${conc} in flight)`, better: 'higher', values: rps });
  }
  return out;
}

/** Horae / peer for every figure both have. */
export function ratios(figures: readonly Figure[]): Ratio[] {
  const out: Ratio[] = [];
  for (const f of figures) {
    const h = f.values['horae'];
    if (h === undefined) continue;
    for (const [peer, p] of Object.entries(f.values)) {
      if (peer === 'horae') continue;
      const ratio = h / p;
      out.push({ group: f.group, name: f.name, peer, horae: h, peerValue: p, ratio, horaeAhead: f.better === 'higher' ? h > p : h < p });
    }
  }
  return out;
}

/** A figure as printed: integers with separators from 100 up, else 2-3 significant decimals. */
export function formatFigure(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '';
  const a = Math.abs(x);
  if (a >= 100) return Math.round(x).toLocaleString('en-US');
  if (a >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

/** `0.37× behind` / `1.84× ahead`. */
export function formatRatio(r: Ratio): string {
  return `${r.ratio >= 100 ? Math.round(r.ratio) : r.ratio.toFixed(2)}× ${r.horaeAhead ? 'ahead' : 'behind'}`;
}

/**
 * The Markdown table: one row per figure, the absolute figure of every system, then
 * Horae / peer for every peer.
 */
export function ratioTable(figures: readonly Figure[], systems: readonly string[]): string {
  const peers = systems.filter((s) => s !== 'horae');
  const name = (s: string): string => SYSTEM_NAMES[s] ?? s;
  const lines = [
    `| workload | figure | better | ${systems.map(name).join(' | ')} |${peers.map((p) => ` Horae / ${name(p)} |`).join('')}`,
    `|---|---|---|${systems.map(() => '---:').join('|')}|${peers.map(() => '---:|').join('')}`,
  ];
  const all = ratios(figures);
  for (const f of figures) {
    const cells = systems.map((s) => formatFigure(f.values[s]));
    const rs = peers.map((p) => {
      const r = all.find((x) => x.group === f.group && x.name === f.name && x.peer === p);
      return r === undefined ? '' : formatRatio(r);
    });
    lines.push(`| ${f.group} | ${f.name} | ${f.better} | ${cells.join(' | ')} |${rs.map((x) => ` ${x} |`).join('')}`);
  }
  return lines.join('\n');
}

/** One line per query: did every system give the expected answer? */
export function answerTable(sets: readonly QuerySetResult[]): string {
  const ids: string[] = [];
  for (const s of sets) for (const q of s.queries) if (!ids.includes(q.id)) ids.push(q.id);
  const lines = [
    `| query | what | answer (series × points) | ${sets.map((s) => SYSTEM_NAMES[s.system] ?? s.system).join(' | ')} |`,
    `|---|---|---|${sets.map(() => '---').join('|')}|`,
  ];
  for (const id of ids) {
    const any = sets.flatMap((s) => s.queries).find((q) => q.id === id)!;
    const cells = sets.map((s) => {
      const q = s.queries.find((x) => x.id === id);
      if (q === undefined) return '';
      return q.check.ok ? `same (max abs diff ${q.check.maxAbsDiff.toExponential(1)})` : `DIFFERS: ${q.check.samples.slice(0, 2).join('; ')}`;
    });
    lines.push(`| ${id} | ${any.title} | ${any.check.expectedSeries} × ${any.check.expectedPoints / Math.max(1, any.check.expectedSeries)} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
