/**
 * Progress output: a redrawn bar on a terminal, a plain line every few seconds elsewhere;
 * and import reporting through it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Progress, formatBytes } from '../../../tsdb/cli/progress.js';
import { horae, tempDir } from './cli-helpers.js';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { out: { isTTY, write: (s: string) => void chunks.push(s) }, chunks };
}

describe('Progress', () => {
  it('prints a plain line per interval when not on a terminal', () => {
    let now = 1000;
    const s = sink(false);
    const p = new Progress(s.out, { now: () => now, lineIntervalMs: 5000, label: 'import' });
    now = 3000;
    p.update({ bytesRead: 10, bytesTotal: 100, points: 5 });
    expect(s.chunks).toEqual([]);
    now = 6000;
    p.update({ bytesRead: 2048, bytesTotal: 4096, points: 50_000 });
    expect(s.chunks).toEqual(['import: 2.0 KiB of 4.0 KiB (50%), 50000 points, 10000 points/s\n']);
    p.finish();
    expect(s.chunks.length).toBe(1);
  });

  it('redraws one bar in place on a terminal and clears it at the end', () => {
    let now = 0;
    const s = sink(true);
    const p = new Progress(s.out, { now: () => now });
    now = 200;
    p.update({ bytesRead: 50, bytesTotal: 100, points: 10 });
    now = 250;
    p.update({ bytesRead: 60, bytesTotal: 100, points: 12 }); // within 100 ms: not drawn
    now = 400;
    p.update({ bytesRead: 100, bytesTotal: 100, points: 20 });
    expect(s.chunks.length).toBe(2);
    expect(s.chunks[0]).toMatch(/^\r\[#{12}-{12}\]  50% 50 B\/100 B 10 points 50 points\/s\x1b\[K$/);
    expect(s.chunks[1]).toMatch(/^\r\[#{24}\] 100% /);
    p.finish();
    expect(s.chunks[2]).toBe('\r\x1b[K');
  });

  it('formats byte counts', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
  });
});

describe('import progress', () => {
  it('reports on stderr while importing', async () => {
    const t = tempDir();
    try {
      const f = join(t.dir, 'p.txt');
      writeFileSync(f, Array.from({ length: 50 }, (_, i) => `m.p ${1_600_000_000 + i} ${i} h=x`).join('\n'));
      let now = 0;
      const r = await horae(['import', '--data-dir', join(t.dir, 'data'), f], {}, {
        batchPoints: 10,
        progress: { tty: false, lineIntervalMs: 1, now: () => (now += 1000) },
      });
      expect(r.code).toBe(0);
      expect(r.err).toMatch(/^import: [\d.]+ (B|KiB) of [\d.]+ (B|KiB) \(\d+%\), \d+ points, \d+ points\/s$/m);
      expect(r.out).toContain('imported 50 points from 1 files');
    } finally {
      t.cleanup();
    }
  });
});
