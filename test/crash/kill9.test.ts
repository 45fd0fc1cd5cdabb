/**
 * A real `kill -9` in the middle of a write stream, three times in a row, on the real file
 * system with flushes and compactions on a worker thread: after each kill the store
 * reopens (recovery must not fail on a torn WAL tail), and at the end every batch the child
 * reported as acknowledged-synced is there with its value, and no row holds a value that
 * was never written.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { fromUtf8 } from '../../core/api/bytes.js';

const CHILD = fileURLToPath(new URL('./kill9-child.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Runs the child until it has acknowledged `minAcks` batches plus a random delay, then SIGKILLs it. */
function runAndKill(dir: string, round: number, minAcks: number, extraMs: number): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(round)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<number, number>();
    let buf = '';
    let err = '';
    let armed = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (err += d));
    child.stdout.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = /^ack (\d+) (\d+) (\d+)$/.exec(line);
        if (m !== null) acked.set(Number(m[2]), Number(m[3]));
      }
      if (!armed && acked.size >= minAcks) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`child exited with ${code}/${signal} before the kill: ${err}`));
      else if (!armed) reject(new Error(`child was killed before acknowledging ${minAcks} batches: ${err}`));
      else resolve(acked);
    });
  });
}

describe('kill -9 during a write stream', () => {
  it('keeps every acknowledged synced batch across three kills', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'horae-kill9-'));
    dirs.push(dir);
    const ledger: { round: number; first: number; count: number }[] = [];
    for (let round = 0; round < 3; round++) {
      const acked = await runAndKill(dir, round, 40 + round * 20, 100 + round * 150);
      for (const [first, count] of acked) ledger.push({ round, first, count });
    }
    expect(ledger.length).toBeGreaterThan(100);
    const store = await openEmbeddedStore({ dir });
    try {
      const t = await store.openTable('k9');
      const seen = new Map<string, string>();
      for await (const batch of t.scan()) {
        for (const row of batch) seen.set(fromUtf8(row.key), fromUtf8(row.cells[0]!.value));
      }
      let missing = 0;
      for (const { round, first, count } of ledger) {
        for (let id = first; id < first + count; id++) {
          if (seen.get(`r${id % 10}-${round}-${id}`) !== `value-${round}-${id}`) missing++;
        }
      }
      expect(missing, 'acknowledged rows missing after kill -9').toBe(0);
      for (const [key, value] of seen) {
        const m = /^r\d-(\d+)-(\d+)$/.exec(key);
        expect(m, `unexpected row ${key}`).not.toBeNull();
        expect(value).toBe(`value-${m![1]}-${m![2]}`);
      }
    } finally {
      await store.close();
    }
  }, 120_000);
});
