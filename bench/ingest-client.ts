/**
 * The load client of the ingest benchmarks, run as a child process (forked with an IPC
 * channel) so it never shares the server's event loop, and its CPU is measured apart from
 * the server's. The same client feeds Horae, VictoriaMetrics and InfluxDB.
 *
 * The wire bytes come from a data file made once per dataset and format
 * (`ensureDataFile`, under $HORAE_BENCH_DATA or <tmpdir>/horae-bench-data): frames of
 * [u32 LE points][u32 LE bytes][body], one per 5k-point batch of bench/devops-data.ts
 * (telnet `put` lines, a JSON array or a msgpack array). Sending then costs the client only
 * reads from the page cache and socket writes: ~0.1 CPU-s per million points instead of
 * ~0.5 for formatting on the fly.
 *
 * With `generate` instead of `file` (bench/cardinality.ts: millions of series, gigabytes of
 * text) the telnet frames are made while sending (devops-data.ts `telnetLean`, ~0.5 CPU-s
 * per million points, counted in the client's CPU). With `maxSeconds` the client stops
 * taking frames after that long (`stoppedEarly`), so a slow server cannot hold a run.
 *
 * Protocol (IPC): the parent forks `ingest-client <spec JSON>`; the client opens the file
 * and (telnet) its connections, sends {type:'ready'}; on {cmd:'go'} it sends every frame —
 *   telnet  `conns` connections (default 4) take the next frame from the shared file, each
 *           writes it as is and waits for 'drain' when the socket buffer is full; at the
 *           end each connection is ended (FIN) once its bytes are handed to the kernel.
 *           Telnet has no acknowledgement: the parent waits until the server has ingested.
 *   http    `conns` POSTs in flight (keep-alive Agent with `conns` sockets), one frame per
 *           request; 503/429 is retried after Retry-After (capped at 1 s); other statuses
 *           count the frame's points as failed (first bodies kept).
 * — then sends {type:'done', ...figures}; it exits on {cmd:'exit'}.
 */
import { once } from 'node:events';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, statSync, writeSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DevopsFormatter, datasetKey, devopsChunks, encodeChunk, telnetLean, totalPoints } from './devops-data.js';
import type { DevopsChunk, DevopsOptions, WireFormat } from './devops-data.js';
import { serveForked } from './peers/proc.js';

export interface ClientSpec {
  readonly proto: 'telnet' | 'http';
  readonly host: string;
  readonly port: number;
  /** HTTP path (default /api/put). */
  readonly path?: string;
  readonly contentType?: string;
  readonly conns: number;
  /** The data file (ensureDataFile), or: */
  readonly file?: string;
  /** the dataset, made into telnet frames while sending. */
  readonly generate?: DevopsOptions;
  /** Stop taking frames after this many seconds from 'go'. */
  readonly maxSeconds?: number;
}

export interface ClientDone {
  readonly points: number;
  readonly bytes: number;
  readonly frames: number;
  /** From 'go' to the last byte handed to the kernel (telnet) or the last response (http). */
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly failedPoints: number;
  readonly retries: number;
  readonly statuses: Record<string, number>;
  readonly errors: string[];
  /** Lines the server sent back on telnet connections (Horae answers only errors). */
  readonly replyLines: number;
  /** Frames were left unsent because `maxSeconds` passed. */
  readonly stoppedEarly: boolean;
}

// ---------------------------------------------------------------------------------------
// Data files

export function dataFileDir(): string {
  return process.env['HORAE_BENCH_DATA'] ?? path.join(os.tmpdir(), 'horae-bench-data');
}

/** The data file of `o` in `format`, made if missing (atomically: .tmp, then rename). */
export function ensureDataFile(o: DevopsOptions, format: WireFormat): string {
  const dir = dataFileDir();
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `devops-${datasetKey(o)}.${format}.frames`);
  if (existsSync(file)) return file;
  const t0 = performance.now();
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  const f = new DevopsFormatter(o);
  const head = Buffer.alloc(8);
  let bytes = 0;
  for (const c of devopsChunks(o)) {
    const body = encodeChunk(f, format, c);
    head.writeUInt32LE(c.n, 0);
    head.writeUInt32LE(body.length, 4);
    writeSync(fd, head);
    writeSync(fd, body);
    bytes += body.length;
  }
  // Written back now, not during the first system's run: 1.3–2 GB of dirty pages flushed
  // beside a server slows its fsyncs (2026-12-07: the first HTTP JSON run after a new
  // file made was the slowest of its four, 0.90× its pair).
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, file);
  console.error(`made ${file}: ${totalPoints(o).toLocaleString('en-US')} points, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

/**
 * Reads the file through once, so the run's client finds it in the page cache. This
 * machine's page cache does not keep files between runs (a Firecracker guest: 2 GB read
 * back 2.6 s cold, 0.2 s warm), and a client reading a cold file spent 3× its usual CPU
 * (in the kernel) and slowed the first system's run of each peers invocation: Horae's
 * first HTTP JSON runs were 0.73–0.90× their pairs, the runs after 1.09–1.27×
 * (2026-12-07).
 */
export function warmPageCache(file: string): void {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(8 << 20);
    let pos = 0;
    for (;;) {
      const r = readSync(fd, buf, 0, buf.length, pos);
      if (r === 0) break;
      pos += r;
    }
  } finally {
    closeSync(fd);
  }
}

interface FrameSource {
  next(): { n: number; body: Buffer } | undefined;
  close(): void;
}

/** Telnet frames of a dataset, made on demand. */
class GeneratedFrames implements FrameSource {
  private readonly chunks: Generator<DevopsChunk>;
  constructor(private readonly o: DevopsOptions) {
    this.chunks = devopsChunks(o);
  }
  next(): { n: number; body: Buffer } | undefined {
    const it = this.chunks.next();
    return it.done === true ? undefined : { n: it.value.n, body: Buffer.from(telnetLean(this.o, it.value), 'latin1') };
  }
  close(): void {}
}

/** Reads frames in order (synchronously: the page cache serves them in microseconds). */
export class FrameReader implements FrameSource {
  private readonly fd: number;
  private pos = 0;
  private readonly size: number;
  private readonly head = Buffer.alloc(8);

  constructor(file: string) {
    this.fd = openSync(file, 'r');
    this.size = statSync(file).size;
  }

  next(): { n: number; body: Buffer } | undefined {
    if (this.pos >= this.size) return undefined;
    this.readFully(this.head);
    const n = this.head.readUInt32LE(0);
    const body = Buffer.allocUnsafe(this.head.readUInt32LE(4));
    this.readFully(body);
    return { n, body };
  }

  close(): void {
    closeSync(this.fd);
  }

  private readFully(buf: Buffer): void {
    let off = 0;
    while (off < buf.length) {
      const r = readSync(this.fd, buf, off, buf.length - off, this.pos);
      if (r === 0) throw new Error('data file truncated');
      off += r;
      this.pos += r;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Client

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

class Client {
  private readonly reader: FrameSource;
  private points = 0;
  private bytes = 0;
  private frames = 0;
  private failedPoints = 0;
  private retries = 0;
  private replyLines = 0;
  private readonly statuses: Record<string, number> = {};
  private readonly errors: string[] = [];
  private sockets: net.Socket[] = [];
  private agent: http.Agent | undefined;
  private deadline = Infinity;
  private stoppedEarly = false;

  constructor(private readonly spec: ClientSpec) {
    if (spec.file !== undefined) this.reader = new FrameReader(spec.file);
    else if (spec.generate !== undefined && spec.proto === 'telnet') this.reader = new GeneratedFrames(spec.generate);
    else throw new Error('ingest-client: a data file, or a dataset to generate telnet frames of');
  }

  private error(msg: string): void {
    if (this.errors.length < 10) this.errors.push(msg.slice(0, 500));
  }

  private take(): { n: number; body: Buffer } | undefined {
    if (performance.now() > this.deadline) {
      this.stoppedEarly = true;
      return undefined;
    }
    const f = this.reader.next();
    if (f !== undefined) {
      this.frames++;
      this.points += f.n;
      this.bytes += f.body.length;
    }
    return f;
  }

  async prepare(): Promise<void> {
    if (this.spec.proto === 'http') {
      this.agent = new http.Agent({ keepAlive: true, maxSockets: this.spec.conns });
      return;
    }
    for (let i = 0; i < this.spec.conns; i++) {
      const s = net.connect(this.spec.port, this.spec.host);
      s.setNoDelay(true);
      await once(s, 'connect');
      let partial = '';
      s.on('data', (d: Buffer) => {
        const text = partial + d.toString('latin1');
        const lines = text.split('\n');
        partial = lines.pop() ?? '';
        this.replyLines += lines.length;
        for (const l of lines) this.error(`telnet reply: ${l}`);
      });
      s.on('error', (e) => this.error(`telnet socket ${i}: ${e.message}`));
      this.sockets.push(s);
    }
  }

  async run(): Promise<ClientDone> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    if (this.spec.maxSeconds !== undefined) this.deadline = t0 + this.spec.maxSeconds * 1000;
    if (this.spec.proto === 'telnet') await Promise.all(this.sockets.map((s) => this.pumpTelnet(s)));
    else await Promise.all(Array.from({ length: this.spec.conns }, () => this.pumpHttp()));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      points: this.points,
      bytes: this.bytes,
      frames: this.frames,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      failedPoints: this.failedPoints,
      retries: this.retries,
      statuses: this.statuses,
      errors: this.errors,
      replyLines: this.replyLines,
      stoppedEarly: this.stoppedEarly,
    };
  }

  private async pumpTelnet(s: net.Socket): Promise<void> {
    for (let f = this.take(); f !== undefined; f = this.take()) {
      if (s.destroyed) {
        this.failedPoints += f.n;
        continue;
      }
      if (!s.write(f.body)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            s.off('drain', done);
            s.off('close', done);
            resolve();
          };
          s.on('drain', done);
          s.on('close', done);
        });
      }
    }
    if (!s.destroyed) await new Promise<void>((resolve) => s.end(resolve));
  }

  private post(body: Buffer): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: this.spec.host,
        port: this.spec.port,
        path: this.spec.path ?? '/api/put',
        method: 'POST',
        agent: this.agent,
        headers: { 'content-type': this.spec.contentType ?? 'application/json', 'content-length': body.length },
      }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(parts).toString('utf8'),
          retryAfter: res.headers['retry-after'],
        }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  private async pumpHttp(): Promise<void> {
    for (let f = this.take(); f !== undefined; f = this.take()) {
      for (let attempt = 1; ; attempt++) {
        let r;
        try {
          r = await this.post(f.body);
        } catch (err) {
          this.statuses['error'] = (this.statuses['error'] ?? 0) + 1;
          if (attempt >= 5) {
            this.failedPoints += f.n;
            this.error(`POST failed ${attempt} times: ${(err as Error).message}`);
            break;
          }
          this.retries++;
          await sleep(100 * attempt);
          continue;
        }
        this.statuses[r.status] = (this.statuses[r.status] ?? 0) + 1;
        if (r.status === 503 || r.status === 429) {
          this.retries++;
          const after = Number(r.retryAfter);
          await sleep(Number.isFinite(after) && after > 0 ? Math.min(1000, after * 1000) : Math.min(1000, 20 * attempt));
          continue;
        }
        if (r.status >= 300) {
          this.failedPoints += f.n;
          this.error(`HTTP ${r.status}: ${r.text}`);
        }
        break;
      }
    }
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.agent?.destroy();
    this.reader.close();
  }
}

serveForked(import.meta.url, async (spec) => {
  const client = new Client(spec as ClientSpec);
  await client.prepare();
  return client;
});
