/**
 * bench:peers is not a test (it needs the peers and minutes); what it computes from its
 * figures is: the devops-cpu generator is deterministic (same seed → same points, whatever
 * the chunk size), and the ratio table is what the recorded figures say.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DevopsFormatter, devopsChunks, devopsOptions, hostTags, totalPoints } from '../../bench/devops-data.js';
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

  it('writes telnet lines of the TSBS order (timestamp, host, metric)', () => {
    const f = new DevopsFormatter(small);
    const first = devopsChunks(small).next().value!;
    const lines = f.telnet(first).split('\n');
    expect(lines[0]).toMatch(/^put cpu\.usage_user 1767225600 [0-9.]+ hostname=host_0 region=\S+ datacenter=\S+ rack=\d+ os=\S+ arch=x(64|86) team=\S+ service=\d+$/);
    expect(lines[1]).toMatch(/^put cpu\.usage_system 1767225600 /);
    expect(lines[70]).toMatch(/^put cpu\.usage_user 1767225610 [0-9.]+ hostname=host_0 /);
  });
});

describe('ratio table from recorded figures', () => {
  // bench/results/ingest-peers-350a10d.json: 8.64 M points, one run of each system.
  const recorded = JSON.parse(readFileSync(new URL('../../bench/results/ingest-peers-350a10d.json', import.meta.url), 'utf8')) as { summary: Summary[] };
  const figures = ingestFigures(recorded.summary);

  it('has the four ingest figures of each workload and value mode', () => {
    expect(figures.map((f) => `${f.group} / ${f.name}`).slice(0, 4)).toEqual([
      'telnet ×4, full / points/s',
      'telnet ×4, full / server CPU-s / M points',
      'telnet ×4, full / peak RSS MiB',
      'telnet ×4, full / bytes/point on disk (allocated)',
    ]);
    expect(figures).toHaveLength(4 * 4);
    expect(figures[0]!.values).toEqual({ horae: 470337, victoriametrics: 1275701, influxdb: 261936 });
  });

  it('divides Horae by the peer and says who is ahead by the direction of the figure', () => {
    const r = ratios(figures);
    const pick = (name: string, peer: string): (typeof r)[number] => r.find((x) => x.group === 'telnet ×4, full' && x.name === name && x.peer === peer)!;
    expect(pick('points/s', 'victoriametrics').ratio).toBeCloseTo(470337 / 1275701, 12);
    expect(pick('points/s', 'victoriametrics').horaeAhead).toBe(false);
    expect(pick('points/s', 'influxdb').horaeAhead).toBe(true);
    expect(pick('server CPU-s / M points', 'victoriametrics').ratio).toBeCloseTo(2.536 / 0.991, 12);
    expect(pick('server CPU-s / M points', 'influxdb').horaeAhead).toBe(true);
    expect(pick('bytes/point on disk (allocated)', 'victoriametrics').ratio).toBeCloseTo(9.413 / 6.842, 12);
  });

  it('prints absolute figures and ratios as Markdown', () => {
    const t = ratioTable(figures, ['horae', 'victoriametrics', 'influxdb']).split('\n');
    expect(t[0]).toBe('| workload | figure | better | Horae | VictoriaMetrics | InfluxDB | Horae / VictoriaMetrics | Horae / InfluxDB |');
    expect(t[2]).toBe('| telnet ×4, full | points/s | higher | 470,337 | 1,275,701 | 261,936 | 0.37× behind | 1.80× ahead |');
    expect(t[3]).toBe('| telnet ×4, full | server CPU-s / M points | lower | 2.54 | 0.99 | 6.84 | 2.56× behind | 0.37× ahead |');
    expect(t[4]).toBe('| telnet ×4, full | peak RSS MiB | lower | 581 | 184 | 238 | 3.16× behind | 2.44× behind |');
  });

  it('adds the query figures: median latency (lower is better) and requests/s (higher)', () => {
    const q = (system: string, medianMs: number, requestsPerSec: number): QuerySetResult => ({
      system, runs: 21, conc: 8, seconds: 5, rssAfterMiB: 0, peakRssMiB: 0,
      queries: [{ id: 'q1', title: 'q1', request: { method: 'GET', path: '/' }, check: { ok: true } as QuerySetResult['queries'][number]['check'], medianMs, p90Ms: 0, minMs: 0, maxMs: 0, serverCpuMsPerQuery: 0, responseBytes: 0, requestsPerSec, loadP50Ms: 0, loadP99Ms: 0, loadErrors: 0, serverCpuMsPerRequest: 0, load1m: 0 }],
    });
    const t = ratioTable(queryFigures([q('horae', 1.2, 2400), q('victoriametrics', 1.5, 3000)]), ['horae', 'victoriametrics']).split('\n');
    expect(t.slice(2)).toEqual([
      '| q1 | median latency ms | lower | 1.20 | 1.50 | 0.80× ahead |',
      '| q1 | requests/s (8 in flight) | higher | 2,400 | 3,000 | 0.80× behind |',
    ]);
  });
});
