/**
 * The side-by-side report of `bench:peers`: the figures of every system (medians over the
 * runs, bench/peers/run.ts `summarize`; the query set, bench/peers/query-run.ts) as rows
 * of one table, with Horae / peer ratios. A ratio is Horae's figure divided by the
 * peer's; whether Horae is ahead depends on the figure: higher is better for points/s and
 * requests/s, lower for CPU-seconds per million points, RSS, bytes/point and latency.
 *
 * Pure functions of recorded figures (test/bench/report.test.ts feeds it a recorded run).
 */
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
  'ingest-inproc': 'in-process',
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
    out.push({ group, name: 'points/s', better: 'higher', values: of((s) => s.pointsPerSec.median) });
    out.push({ group, name: 'server CPU-s / M points', better: 'lower', values: of((s) => s.serverCpuPerM) });
    out.push({ group, name: 'peak RSS MiB', better: 'lower', values: of((s) => s.peakRssMiB) });
    const bytes = of((s) => s.allocatedPerPoint);
    if (Object.keys(bytes).length > 0) out.push({ group, name: 'bytes/point on disk (allocated)', better: 'lower', values: bytes });
  }
  return out;
}

/** Query figures per query id: median latency and requests/s. */
export function queryFigures(sets: readonly QuerySetResult[]): Figure[] {
  const ids: string[] = [];
  for (const s of sets) for (const q of s.queries) if (!ids.includes(q.id)) ids.push(q.id);
  const out: Figure[] = [];
  for (const id of ids) {
    const lat: Record<string, number> = {};
    const rps: Record<string, number> = {};
    for (const s of sets) {
      const q = s.queries.find((x) => x.id === id);
      if (q === undefined) continue;
      // A failed query has no figures (NaN): left out, its answer check says why.
      if (Number.isFinite(q.medianMs)) lat[s.system] = q.medianMs;
      if (Number.isFinite(q.requestsPerSec)) rps[s.system] = q.requestsPerSec;
    }
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
