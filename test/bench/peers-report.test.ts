/**
 * bench:record is not a test (it needs the peers and minutes); what it computes from its
 * figures is: the devops-cpu generator is deterministic (same seed → same points, whatever
 * the chunk size; the lean telnet lines of bench:cardinality are the same text), and the
 * ratio table is what the figures say.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DevopsFormatter, devopsChunks, devopsOptions, hostTags, telnetLean, totalPoints } from '../../bench/devops-data.js';
import type { DevopsOptions } from '../../bench/devops-data.js';
import { ingestFigures, queryFigures, ratioTable, ratios } from '../../bench/peers/report.js';
import type { QuerySetResult } from '../../bench/peers/query-run.js';
import type { Summary } from '../../bench/peers/run.js';

function allValues(o: DevopsOptions): Float64Array {
  const out = new Float64Array(totalPoints(o));
  for (const c of devopsChunks(o)) out.set(c.values, c.start);
  return out;
}

function telnetSha1(o: DevopsOptions): string {
  const f = new DevopsFormatter(o);
  const h = createHash('sha1');
  for (const c of devopsChunks(o)) h.update(f.telnet(c));
  return h.digest('hex');
}

describe('devops-cpu generator', () => {
  const small = devopsOptions({ hosts: 7, hours: 0.5 });

  it('gives the same points for the same seed, in chunks of any size', () => {
    const a = allValues(small);
    expect(a.length).toBe(7 * 10 * 180);
    expect(allValues(small)).toEqual(a);
    expect(allValues({ ...small, batchPoints: 333 })).toEqual(a);
    expect(telnetSha1(small)).toBe(telnetSha1({ ...small, batchPoints: 1000 }));
    expect(allValues({ ...small, seed: small.seed + 1 })).not.toEqual(a);
    for (const v of a) expect(v >= 0 && v <= 100).toBe(true);
  });

  it('rounds the same walk to 2 decimals in 2dec mode', () => {
    const full = allValues(small);
    const dec = allValues({ ...small, values: '2dec' });
    for (let i = 0; i < full.length; i++) expect(dec[i]).toBe(Math.round(full[i]! * 100) / 100);
  });

  it('gives a host the same 8 tags at any scale', () => {
    const t = hostTags(3, small.seed);
    expect(t.map(([k]) => k)).toEqual(['hostname', 'region', 'datacenter', 'rack', 'os', 'arch', 'team', 'service']);
    expect(new DevopsFormatter(devopsOptions({ hosts: 50, hours: 1 })).series[30]!.tags).toEqual(t);
  });

  it('writes the same telnet lines without per-series objects (telnetLean), for any metric count', () => {
    for (const o of [small, devopsOptions({ hosts: 13, hours: 0.2, metrics: 3, batchPoints: 77 })]) {
      const f = new DevopsFormatter(o);
      let a = '';
      let b = '';
      for (const c of devopsChunks(o)) {
        a += f.telnet(c);
        b += telnetLean(o, c);
      }
      expect(b).toBe(a);
    }
  });

  it('writes telnet lines of the TSBS order (timestamp, host, metric)', () => {
    const f = new DevopsFormatter(small);
    const first = devopsChunks(small).next().value!;
    const lines = f.telnet(first).split('\n');
    expect(lines[0]).toMatch(/^put cpu\.usage_user 1767225600 [0-9.]+ hostname=host_0 region=\S+ datacenter=\S+ rack=\d+ os=\S+ arch=x(64|86) team=\S+ service=\d+$/);
    expect(lines[1]).toMatch(/^put cpu\.usage_system 1767225600 /);
    expect(lines[70]).toMatch(/^put cpu\.usage_user 1767225610 [0-9.]+ hostname=host_0 /);
  });
});

describe('ratio table of the figures as users run the server', () => {
  const summary = (system: string, pps: number, cpu: number, du: [number, number, number], idle: number, rss: [number, number], ready: number): Summary => ({
    system, version: 'v', workload: 'ingest-telnet', values: '2dec', runs: 2, waitSeconds: 180,
    pointsPerSec: { median: pps, min: pps, max: pps }, serverCpuPerM: cpu, clientCpuPerM: 0.1, peakRssMiB: rss[0],
    rssAfterLoadMiB: rss[0], rssAfterWaitMiB: rss[1], idleCpuSeconds: idle,
    bytesPerPointAfterLoad: du[0], bytesPerPointAfterWait: du[1], bytesPerPointAfterStop: du[2], readySeconds: ready,
  });
  // issue 31's table: Horae and VictoriaMetrics 1.79, 3 minutes left alone.
  const figures = ingestFigures([
    summary('horae', 1_150_000, 1.02, [22, 19.3, 8.0], 6.7, [473, 399], 7.1),
    summary('victoriametrics', 1_190_000, 1.15, [1.5, 1.37, 1.89], 0.7, [123, 102], 0.18),
  ]);

  it('has every figure of a workload and value mode, the wait in its name', () => {
    expect(figures.map((f) => f.name)).toEqual([
      'points/s until all queryable', 'server CPU-s / M points', 'bytes/point on disk (du) after the load',
      'bytes/point on disk (du) 180 s after it', 'bytes/point on disk (du) after a clean stop', 'CPU-s while idle for 180 s',
      'RSS MiB after the load', 'RSS MiB 180 s after it', 'ready after a restart, s',
    ]);
    expect(figures.every((f) => f.group === 'telnet ×4, 2dec')).toBe(true);
  });

  it('divides Horae by the peer and says who is ahead by the direction of the figure', () => {
    const r = ratios(figures);
    const pick = (name: string): (typeof r)[number] => r.find((x) => x.name === name && x.peer === 'victoriametrics')!;
    expect(pick('points/s until all queryable').ratio).toBeCloseTo(1.15 / 1.19, 12);
    expect(pick('points/s until all queryable').horaeAhead).toBe(false);
    expect(pick('server CPU-s / M points').horaeAhead).toBe(true);
    expect(pick('bytes/point on disk (du) 180 s after it').ratio).toBeCloseTo(19.3 / 1.37, 12);
    expect(pick('ready after a restart, s').horaeAhead).toBe(false);
  });

  it('prints absolute figures and ratios as Markdown', () => {
    const t = ratioTable(figures, ['horae', 'victoriametrics']).split('\n');
    expect(t[0]).toBe('| workload | figure | better | Horae | VictoriaMetrics | Horae / VictoriaMetrics |');
    expect(t[2]).toBe('| telnet ×4, 2dec | points/s until all queryable | higher | 1,150,000 | 1,190,000 | 0.97× behind |');
    expect(t[7]).toBe('| telnet ×4, 2dec | CPU-s while idle for 180 s | lower | 6.70 | 0.70 | 9.57× behind |');
  });

  it('adds the query figures, each the median over the runs of a system', () => {
    const q = (system: string, medianMs: number, requestsPerSec: number): QuerySetResult => ({
      system, runs: 21, conc: 8, seconds: 5, rssAfterMiB: 0,
      queries: [{ id: 'q1', title: 'q1', request: { method: 'GET', path: '/' }, check: { ok: true } as QuerySetResult['queries'][number]['check'], medianMs, p90Ms: 0, minMs: 0, maxMs: 0, serverCpuMsPerQuery: 0, responseBytes: 0, requestsPerSec, loadP50Ms: 0, loadP99Ms: 0, loadErrors: 0, serverCpuMsPerRequest: 0, load1m: 0 }],
    });
    const sets = [q('horae', 9, 100), q('victoriametrics', 1.5, 3000), q('victoriametrics', 1.7, 2000), q('horae', 1.2, 2400), q('horae', 1.0, 2600)];
    const t = ratioTable(queryFigures(sets), ['horae', 'victoriametrics']).split('\n');
    expect(t.slice(2)).toEqual([
      '| q1 | median latency ms | lower | 1.20 | 1.60 | 0.75× ahead |',
      '| q1 | requests/s (8 in flight) | higher | 2,400 | 2,500 | 0.96× behind |',
    ]);
  });
});
