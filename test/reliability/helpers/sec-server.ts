/**
 * A real Horae server (startServer: fastify + the one-port listener) on 127.0.0.1 and an
 * ephemeral port, over an in-memory store with a fixed clock, for the access, limit and
 * fuzz tests; plus raw-socket clients that see exactly what the server sends and when it
 * closes (node:http's client would hide both).
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { openMemoryStore } from '../../../core/index.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';

export const NOW_MS = Date.UTC(2026, 0, 1, 12);

export async function startSecServer(config: Partial<TsdbConfig> = {}, log?: (m: string) => void): Promise<RunningServer> {
  const store = await openMemoryStore({ clock: () => NOW_MS });
  return startServer({
    store,
    port: 0,
    bind: '127.0.0.1',
    config: { compactHours: false, ...config },
    now: () => NOW_MS,
    ...(log === undefined ? {} : { log }),
  });
}

/** A raw TCP client: everything received, and whether/when the server closed. */
export class RawClient {
  readonly socket: Socket;
  private received = '';
  closed = false;
  closedAt = 0;
  private waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => { this.received += c.toString('latin1'); this.wake(); });
    socket.on('error', () => undefined);
    socket.on('close', () => { this.closed = true; this.closedAt = Date.now(); this.wake(); });
  }

  static async open(port: number): Promise<RawClient> {
    const s = connect({ host: '127.0.0.1', port });
    const c = new RawClient(s);
    await new Promise<void>((resolve, reject) => {
      s.once('connect', () => resolve());
      s.once('error', reject);
      s.once('close', () => resolve());
    });
    return c;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Everything received, one char per byte. */
  get text(): string {
    return this.received;
  }

  write(s: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(s);
  }

  /** Waits until `pred(text)` holds or the connection closed; fails after `timeoutMs`. */
  async until(pred: (text: string) => boolean, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.text)) {
      if (this.closed) return this.text;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms; received: ${JSON.stringify(this.text.slice(0, 500))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => { clearTimeout(t); r(); });
      });
    }
    return this.text;
  }

  /** Waits for the server to close the connection; fails after `timeoutMs`. */
  async untilClosed(timeoutMs = 5000): Promise<void> {
    await this.until(() => false, timeoutMs).catch((e: Error) => { throw new Error(`connection still open: ${e.message}`); });
    if (!this.closed) throw new Error('connection still open');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Parses the first HTTP/1.1 response in `text` (Content-Length bodies only). */
export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    const k = l.slice(0, i).trim().toLowerCase();
    headers[k] = headers[k] === undefined ? l.slice(i + 1).trim() : `${headers[k]}, ${l.slice(i + 1).trim()}`;
  }
  const len = Number(headers['content-length'] ?? 0);
  if (text.length < end + 4 + len) return undefined;
  return { status, headers, body: text.slice(end + 4, end + 4 + len) };
}

/** One request over a fresh connection; resolves with the parsed response. */
export async function rawRequest(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  const c = await RawClient.open(port);
  try {
    c.write(request);
    const text = await c.until((t) => parseResponse(t) !== undefined, timeoutMs);
    const r = parseResponse(text);
    if (r === undefined) throw new Error(`no complete response; got ${JSON.stringify(text.slice(0, 300))}`);
    return r;
  } finally {
    c.destroy();
  }
}

/** An HTTP/1.1 request's text. */
export function httpText(method: string, path: string, headers: Record<string, string> = {}, body = ''): string {
  const h = { host: '127.0.0.1', connection: 'close', ...(body === '' ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...headers };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
