/**
 * The paced load client of bench/live.ts and bench/cardinality.ts `--churn`, run as a child
 * process (forked with an IPC channel): devops-cpu points (bench/devops-data.ts tags, a
 * clamped random walk per series rounded to 2 decimals) with current timestamps, at a
 * fixed rate, as JSON bodies POSTed to /api/put, for a bounded time.
 *
 *   series   `activeHosts` host slots × `metrics` metrics; every `intervalSec` each series
 *            gets one point, spread evenly over the interval (point i of the stream is due
 *            at t0 + i / rate, rate = series / interval)
 *   time     the data timestamp of step k is ⌊(t0 + clockOffsetMs) / 1000⌋ + k × interval
 *            (seconds): the wall clock, shifted by `clockOffsetMs`
 *   churn    with `replaceHosts` R and `replaceEverySec` P: every P seconds the next R
 *            slots (cyclically) get a host never seen before (slot s after g replacements is
 *            host s + g × activeHosts), with a fresh walk; 0 = no churn
 *   sending  batches of `batchPoints`, at most `conns` requests in flight (keep-alive); a
 *            batch is sent when due, or as soon as a request slot frees if the server is
 *            behind (its lag is recorded). 503/429 count as failed here (no retry: the
 *            offered rate stays fixed)
 *   acks     per request: wall time sent (ms since t0), latency to the answer (ms), lag
 *            behind schedule (ms), the data timestamp of its first point, HTTP status
 *
 * Stops taking new batches after `durationSec`; waits at most `drainSec` for the ones in
 * flight. IPC: {type:'ready'} after the socket pool exists; on {cmd:'go'} it runs,
 * sending {type:'progress', …} every `progressSec` and {type:'done', …} at the end;
 * {cmd:'exit'} ends it.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Random } from '../core/util/random.js';
import { METRICS, hostTags } from './devops-data.js';
import { serveForked } from './peers/proc.js';

export interface PacedSpec {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly activeHosts: number;
  readonly metrics: number;
  readonly intervalSec: number;
  readonly clockOffsetMs: number;
  readonly durationSec: number;
  readonly drainSec: number;
  readonly batchPoints: number;
  readonly conns: number;
  readonly replaceHosts: number;
  readonly replaceEverySec: number;
  readonly progressSec: number;
  readonly seed: number;
}

/** One acknowledged (or failed) request. */
export interface Ack {
  readonly sentMs: number;
  readonly latencyMs: number;
  readonly lagMs: number;
  readonly dataSec: number;
  readonly status: number;
}

export interface PacedDone {
  /** Date.now() at t0. */
  readonly startWallMs: number;
  readonly seconds: number;
  readonly pointsSent: number;
  readonly pointsAcked: number;
  readonly pointsFailed: number;
  readonly seriesCreated: number;
  readonly cpuSeconds: number;
  readonly errors: readonly string[];
  readonly acks: readonly Ack[];
}

/** The host in slot `s` after `rounds` replacement rounds of `r` slots each (cyclic over `a` slots). */
export function hostOfSlot(s: number, a: number, r: number, rounds: number): number {
  return s + a * Math.floor((rounds * r - s + a - 1) / a);
}

class Paced {
  private readonly agent: http.Agent;
  private readonly series: number;
  private readonly rate: number;
  private readonly slotHost: Float64Array;
  private readonly heads: string[][];
  private readonly walk: Float64Array;
  private readonly rnd: Random;
  private readonly acks: Ack[] = [];
  private readonly errors: string[] = [];
  private sent = 0;
  private acked = 0;
  private failed = 0;
  private created = 0;
  private rounds = 0;

  constructor(private readonly spec: PacedSpec) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: spec.conns });
    this.series = spec.activeHosts * spec.metrics;
    this.rate = this.series / spec.intervalSec;
    this.slotHost = new Float64Array(spec.activeHosts).fill(-1);
    this.heads = new Array<string[]>(spec.activeHosts);
    this.walk = new Float64Array(this.series);
    this.rnd = new Random(spec.seed);
  }

  /** The JSON heads of slot `s`'s host now (made when the slot gets a new host). */
  private headsOf(s: number): string[] {
    const h = hostOfSlot(s, this.spec.activeHosts, this.spec.replaceHosts, this.rounds);
    if (this.slotHost[s] !== h) {
      this.slotHost[s] = h;
      const tags = JSON.stringify(Object.fromEntries(hostTags(h, this.spec.seed)));
      this.heads[s] = METRICS.slice(0, this.spec.metrics).map((m) => `{"metric":${JSON.stringify(m)},"tags":${tags},"timestamp":`);
      for (let m = 0; m < this.spec.metrics; m++) this.walk[s * this.spec.metrics + m] = this.rnd.next() * 100;
      this.created += this.spec.metrics;
    }
    return this.heads[s]!;
  }

  /** Points [i, i+n) of the stream as a JSON body. */
  private body(i: number, n: number, baseSec: number): string {
    const { metrics, intervalSec } = this.spec;
    let out = '[';
    for (let j = i; j < i + n; j++) {
      const step = Math.floor(j / this.series);
      const si = j % this.series;
      const s = Math.floor(si / metrics);
      const heads = this.headsOf(s);
      const u = 1 - this.rnd.next();
      let v = this.walk[si]! + Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.rnd.next());
      v = v < 0 ? 0 : v > 100 ? 100 : v;
      this.walk[si] = v;
      out += (j === i ? '' : ',') + heads[si % metrics]! + (baseSec + step * intervalSec) + ',"value":' + Math.round(v * 100) / 100 + '}';
    }
    return out + ']';
  }

  private post(body: string): Promise<number> {
    return new Promise((resolve) => {
      const req = http.request({
        host: this.spec.host, port: this.spec.port, path: this.spec.path, method: 'POST', agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300 && this.errors.length < 10) this.errors.push(`HTTP ${res.statusCode}: ${Buffer.concat(parts).toString('utf8', 0, 300)}`);
          resolve(res.statusCode ?? 0);
        });
        res.on('error', () => resolve(0));
      });
      req.setTimeout(120_000, () => req.destroy(new Error('no answer within 120 s')));
      req.on('error', (e) => {
        if (this.errors.length < 10) this.errors.push(e.message);
        resolve(0);
      });
      req.end(body);
    });
  }

  async run(send: (m: Record<string, unknown>) => void): Promise<PacedDone> {
    const { spec } = this;
    const cpu0 = process.cpuUsage();
    const startWallMs = Date.now();
    const t0 = performance.now();
    const baseSec = Math.floor((startWallMs + spec.clockOffsetMs) / 1000);
    const end = t0 + spec.durationSec * 1000;
    let next = 0;
    const timer = setInterval(() => send({ type: 'progress', t: (performance.now() - t0) / 1000, sent: this.sent, acked: this.acked, failed: this.failed, created: this.created }), spec.progressSec * 1000);
    const loop = async (): Promise<void> => {
      for (;;) {
        const i = next;
        const due = t0 + (i / this.rate) * 1000;
        if (due >= end) return;
        next += spec.batchPoints;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (spec.replaceHosts > 0) this.rounds = Math.floor((performance.now() - t0) / 1000 / spec.replaceEverySec);
        const n = Math.min(spec.batchPoints, Math.ceil(((end - t0) / 1000) * this.rate) - i);
        if (n <= 0) return;
        const body = this.body(i, n, baseSec);
        const sent = performance.now();
        this.sent += n;
        const status = await this.post(body);
        const latency = performance.now() - sent;
        if (status === 204 || status === 200) this.acked += n;
        else this.failed += n;
        this.acks.push({
          sentMs: Math.round((sent - t0) * 10) / 10, latencyMs: Math.round(latency * 100) / 100, lagMs: Math.round(Math.max(0, sent - due)),
          dataSec: baseSec + Math.floor(i / this.series) * spec.intervalSec, status,
        });
      }
    };
    const loops = Promise.all(Array.from({ length: spec.conns }, loop));
    await Promise.race([loops, new Promise((r) => setTimeout(r, spec.durationSec * 1000 + spec.drainSec * 1000))]);
    clearInterval(timer);
    const cpu = process.cpuUsage(cpu0);
    return {
      startWallMs, seconds: (performance.now() - t0) / 1000, pointsSent: this.sent, pointsAcked: this.acked, pointsFailed: this.failed,
      seriesCreated: this.created, cpuSeconds: (cpu.user + cpu.system) / 1e6, errors: this.errors, acks: this.acks,
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

serveForked(import.meta.url, async (spec) => new Paced(spec as PacedSpec));
