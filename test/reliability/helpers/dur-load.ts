/**
 * Writers for the durability tests: HTTP /api/put (plain and ?sync) and telnet `put`
 * lines, each owning one series of the ledger (dur-ledger.ts), all aimed at a Target
 * whose address changes when the server is restarted. A writer never retries: a batch
 * without an acknowledgement stays "sent" (it may or may not be stored), the next batch
 * takes new point numbers. Connection errors while the server is down are expected; the
 * writer waits a little and goes on with the restarted server.
 *
 * Telnet acknowledgement: put lines, then `version`. The server answers `version` only
 * after every earlier put of the connection is durable (or has failed with an error line),
 * so the version reply with no `put:` error line before it acknowledges the batch
 * (docs/DURABILITY.md, "What a telnet put means").
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { Ledger, T0, metricOf, valueOf } from './dur-ledger.js';
import { sleep } from './dur-child.js';

/** Where the writers send; `port` 0 while the server is down. */
export interface Target {
  port: number;
}

export interface WriterCounters {
  httpBatches: number;
  httpAcked: number;
  http503: number;
  /** 503s whose message says the disk is full (TSDB_STORAGE_FULL). */
  http503Full: number;
  /** 503s with Retry-After. */
  http503RetryAfter: number;
  httpOther: Record<string, number>;
  /** The last few error lines telnet writers received. */
  telnetErrorLines: string[];
  telnetBatches: number;
  telnetAcked: number;
  telnetErrors: number;
  connectionErrors: number;
}

export function newCounters(): WriterCounters {
  return {
    httpBatches: 0, httpAcked: 0, http503: 0, http503Full: 0, http503RetryAfter: 0, httpOther: {}, telnetErrorLines: [],
    telnetBatches: 0, telnetAcked: 0, telnetErrors: 0, connectionErrors: 0,
  };
}

export interface LoadOptions {
  readonly ledger: Ledger;
  readonly target: Target;
  readonly counters: WriterCounters;
  readonly random: () => number;
  readonly isStopped: () => boolean;
  /** Points per batch, at most. */
  readonly maxBatch: number;
  /** Share of HTTP batches sent with ?sync. Default 0.5. */
  readonly syncFraction?: number;
}

function putBody(w: number, from: number, count: number): string {
  const pts = [];
  for (let n = from; n < from + count; n++) pts.push({ metric: metricOf(w), timestamp: T0 + n, value: valueOf(w, n), tags: { w: `w${w}` } });
  return JSON.stringify(pts);
}

/** An HTTP writer: batches to /api/put, `?sync` on about half of them. */
export async function httpWriter(w: number, o: LoadOptions): Promise<void> {
  while (!o.isStopped()) {
    if (o.target.port === 0) {
      await sleep(20);
      continue;
    }
    const count = 1 + Math.floor(o.random() * o.maxBatch);
    const sync = o.random() < (o.syncFraction ?? 0.5);
    const from = o.ledger.take(w, count);
    o.counters.httpBatches++;
    try {
      const r = await fetch(`http://127.0.0.1:${o.target.port}/api/put${sync ? '?sync' : ''}`, {
        method: 'POST',
        body: putBody(w, from, count),
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      if (r.status === 204) {
        o.ledger.ack(w, from, count);
        o.counters.httpAcked += count;
      } else if (r.status === 503) {
        o.counters.http503++;
        if (/no space left on device/.test(text)) o.counters.http503Full++;
        if (r.headers.get('retry-after') !== null) o.counters.http503RetryAfter++;
        await sleep(Number(r.headers.get('retry-after') ?? '1') * 50);
      } else {
        o.counters.httpOther[r.status] = (o.counters.httpOther[r.status] ?? 0) + 1;
      }
    } catch {
      o.counters.connectionErrors++;
      await sleep(20);
    }
  }
}

/** Reads reply lines of one telnet connection. */
class LineReader {
  private buf = '';
  private waiters: (() => void)[] = [];
  closed = false;
  readonly lines: string[] = [];

  constructor(sock: Socket) {
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      this.buf += d;
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        this.lines.push(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
      }
      this.wake();
    });
    const end = (): void => {
      this.closed = true;
      this.wake();
    };
    sock.on('close', end);
    sock.on('error', end);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when a new line arrives or the connection ends. */
  next(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** A telnet writer: batches of put lines, each closed by a `version` barrier. */
export async function telnetWriter(w: number, o: LoadOptions): Promise<void> {
  while (!o.isStopped()) {
    if (o.target.port === 0) {
      await sleep(20);
      continue;
    }
    let sock: Socket;
    try {
      sock = await open(o.target.port);
    } catch {
      o.counters.connectionErrors++;
      await sleep(20);
      continue;
    }
    sock.on('error', () => undefined);
    const reader = new LineReader(sock);
    try {
      while (!o.isStopped() && !reader.closed) {
        const count = 1 + Math.floor(o.random() * o.maxBatch);
        const from = o.ledger.take(w, count);
        let text = '';
        for (let n = from; n < from + count; n++) text += `put ${metricOf(w)} ${T0 + n} ${valueOf(w, n)} w=w${w}\n`;
        o.counters.telnetBatches++;
        sock.write(`${text}version\n`);
        let errors = 0;
        let acked = false;
        while (!reader.closed) {
          const line = reader.lines.shift();
          if (line === undefined) {
            await reader.next();
            continue;
          }
          if (line.startsWith('put:')) {
            errors++;
            o.counters.telnetErrorLines.push(line);
            if (o.counters.telnetErrorLines.length > 20) o.counters.telnetErrorLines.shift();
          }
          else if (line.startsWith('net.opentsdb.tools')) {
            acked = errors === 0;
            reader.lines.shift(); // the second version line (may not have arrived yet; harmless)
            break;
          }
        }
        if (acked) {
          o.ledger.ack(w, from, count);
          o.counters.telnetAcked += count;
        } else {
          o.counters.telnetErrors += errors;
          if (errors > 0) await sleep(50);
        }
      }
    } finally {
      sock.destroy();
    }
    if (!o.isStopped()) {
      o.counters.connectionErrors++;
      await sleep(20);
    }
  }
}
