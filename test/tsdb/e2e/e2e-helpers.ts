/** Real servers on real directories for end-to-end tests: start, talk, stop. */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '../../../core/index.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startOn(dir: string, config: Partial<TsdbConfig> = {}, port = 0): Promise<RunningServer> {
  const store = await openEmbeddedStore({ dir });
  return startServer({ store, port, bind: '127.0.0.1', config });
}

/** Sends `text` over a fresh telnet connection, half-closes, and collects every reply until the server closes. */
export function telnet(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (out += d));
    sock.on('error', reject);
    sock.on('close', () => resolve(out));
    sock.end(text);
  });
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
