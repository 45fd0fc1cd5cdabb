/**
 * The telnet side of docs/DURABILITY.md: the `version` barrier holds even after a failed
 * batch whose error lines overflow the reply budget (error lines are dropped, command
 * answers never), and a client that sends commands but never reads is paused instead of
 * making the server buffer its answers.
 */
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TelnetBackend } from '../../tsdb/server/telnet/telnet-backend.js';
import { TelnetSession, newTelnetStats, resolveTelnetOptions } from '../../tsdb/server/telnet/telnet-session.js';
import type { TelnetStats } from '../../tsdb/server/telnet/telnet-session.js';

const VERSION = ['net.opentsdb.tools test', 'Built on test'];

function backend(fail: boolean): TelnetBackend {
  return {
    async putBatch() {
      if (fail) throw new Error('storage failed the write: no space left on device (a long message to fill the budget quickly)');
      return [];
    },
    overloaded: () => false,
    whenWritable: () => Promise.resolve(),
    versionLines: () => VERSION,
    statsLines: async () => [],
    dropCaches: async () => undefined,
    status: () => 'ok',
  };
}

const cleanup: (Server | Socket)[] = [];
afterEach(() => {
  for (const x of cleanup.splice(0)) {
    if ('destroy' in x) x.destroy();
    else x.close();
  }
});

async function serve(b: TelnetBackend): Promise<{ port: number; stats: TelnetStats; sockets: Socket[] }> {
  const stats = newTelnetStats();
  const sockets: Socket[] = [];
  const opts = resolveTelnetOptions({ replyBufferBytes: 64 * 1024 });
  const server = createServer({ allowHalfOpen: true }, (s) => {
    sockets.push(s);
    cleanup.push(s);
    new TelnetSession(s, b, opts, stats);
  });
  cleanup.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, stats, sockets };
}

async function client(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  cleanup.push(s);
  await once(s, 'connect');
  return s;
}

describe('telnet barrier and stuck clients', () => {
  it('answers a version after a failed batch whose error lines overflow the reply budget', async () => {
    const h = await serve(backend(true));
    const c = await client(h.port);
    let text = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => (text += d));
    let puts = '';
    for (let i = 0; i < 3000; i++) puts += `put m ${1_700_000_000 + i} ${i} a=b\n`;
    c.write(`${puts}version\n`);
    await vi.waitFor(() => expect(text).toContain(VERSION[1]), { timeout: 10_000 });
    const lines = text.trim().split('\n');
    // Some error lines were dropped (64 KiB budget), the version answer was not, and it came last.
    expect(h.stats.writesBlocked).toBeGreaterThan(0);
    expect(lines.slice(-2)).toEqual(VERSION);
    expect(lines.slice(0, -2).every((l) => l.startsWith('put: HBase error: '))).toBe(true);
  });

  it('pauses a client that sends commands and never reads; others are served', async () => {
    const h = await serve(backend(false));
    const stuck = await client(h.port);
    stuck.pause();
    const chunk = 'version\n'.repeat(8192);
    for (let sent = 0; sent < 16 * 1024 * 1024; sent += chunk.length) stuck.write(chunk);
    await vi.waitFor(() => expect(h.stats.pauses).toBeGreaterThan(0), { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    // The server stopped reading: most of what was sent is still in this process.
    expect(stuck.writableLength).toBeGreaterThan(8 * 1024 * 1024);
    // What the server holds for it is bounded by the reply budget plus one chunk of answers.
    expect(h.sockets[0]!.writableLength).toBeLessThan(2 * 1024 * 1024);
    expect(h.stats.writesBlocked).toBe(0); // answers to commands are never dropped
    const other = await client(h.port);
    let text = '';
    other.setEncoding('utf8');
    other.on('data', (d: string) => (text += d));
    other.write('version\n');
    await vi.waitFor(() => expect(text).toBe(`${VERSION.join('\n')}\n`), { timeout: 10_000 });
  });
});
