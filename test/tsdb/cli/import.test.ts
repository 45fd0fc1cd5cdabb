/**
 * `horae import`: plain and gzip files (by extension and by magic bytes) streamed into a
 * store in a temporary directory, then read back point by point; stopping at the first
 * bad line (earlier lines written, later ones not), --skip-errors, points the writer
 * rejects, and a store that is in use.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../core/index.js';
import { horae, readAll, tempDir } from './cli-helpers.js';

// 2020-09-13T12:00:00Z: hours long closed, so the import compresses them.
const T0 = 1_600_000_000 - (1_600_000_000 % 3600);

describe('horae import', () => {
  let t: { dir: string; cleanup: () => void };
  let data: string;
  beforeEach(() => {
    t = tempDir();
    data = join(t.dir, 'data');
  });
  afterEach(() => t.cleanup());

  it('imports a plain and a .gz file, skipping comments and blank lines', async () => {
    const plain = join(t.dir, 'a.txt');
    writeFileSync(plain, [
      '# exported by tsdb scan --import',
      `sys.cpu.user ${T0} 1 host=a cpu=0`,
      '',
      `sys.cpu.user ${T0 + 10} 2.5 host=a cpu=0\r`,
      `   sys.cpu.user\t${T0 + 3600} 3 host=a cpu=0   `,
      `sys.cpu.user ${(T0 + 20) * 1000 + 500} -4 cpu=0 host=a`,
    ].join('\n'));
    const gz = join(t.dir, 'b.txt.gz');
    const lines: string[] = [];
    for (let i = 0; i < 500; i++) lines.push(`sys.mem.free ${T0 + i * 30} ${i * 1000} host=b`);
    writeFileSync(gz, gzipSync(lines.join('\n') + '\n'));

    const r = await horae(['import', '--data-dir', data, plain, gz], {}, { batchPoints: 64 });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^imported 504 points from 2 files in [\d.]+ s \(\d+ points\/s\)$/m);

    const { points, uncompactedRows } = await readAll(data);
    expect(points.length).toBe(504);
    expect(uncompactedRows).toBe(0);
    const cpu = points.filter((p) => p.series === 'sys.cpu.user{cpu=0,host=a}');
    expect(cpu.map((p) => [p.ts, p.value])).toEqual([
      [T0 * 1000, 1], [(T0 + 10) * 1000, 2.5], [(T0 + 20) * 1000 + 500, -4], [(T0 + 3600) * 1000, 3],
    ]);
    const mem = points.filter((p) => p.series === 'sys.mem.free{host=b}');
    expect(mem.length).toBe(500);
    expect(mem[499]).toEqual({ series: 'sys.mem.free{host=b}', ts: (T0 + 499 * 30) * 1000, value: 499_000 });
  });

  it('recognizes gzip by its magic bytes without the .gz name', async () => {
    const f = join(t.dir, 'export.dat');
    writeFileSync(f, gzipSync(`m.gz ${T0} 7 k=v\nm.gz ${T0 + 1} 8 k=v\n`));
    const r = await horae(['import', '--data-dir', data, f]);
    expect(r.code).toBe(0);
    expect((await readAll(data)).points.map((p) => p.value)).toEqual([7, 8]);
  });

  it.each([1, 2, 10_000])('stops at the first bad line with file:line, earlier lines written (batch %i)', async (batchPoints) => {
    const f = join(t.dir, 'bad.txt');
    writeFileSync(f, [
      `m.a ${T0} 1 h=x`,
      `m.a ${T0 + 1} 2 h=x`,
      `m.a ${T0 + 2} 3 h=x`,
      `m.a ${T0 + 3} zzz h=x`,
      `m.a ${T0 + 4} 5 h=x`,
    ].join('\n'));
    const r = await horae(['import', '--data-dir', data, f], {}, { batchPoints });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^${f}:4: .*zzz$`, 'm'));
    expect(r.out).toContain('imported 3 points from 1 files');
    expect((await readAll(data)).points.map((p) => p.value)).toEqual([1, 2, 3]);
  });

  it('reports names the writer would refuse at their line; only earlier lines are written', async () => {
    const f = join(t.dir, 'names.txt');
    writeFileSync(f, `ok.metric ${T0} 1 h=x\nmetric?name ${T0} 1 h=x\nok.metric ${T0 + 1} 2 h=x\n`);
    const r = await horae(['import', '--data-dir', data, f]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${f}:2: Invalid metric name ("metric?name")`);
    expect((await readAll(data)).points.map((p) => [p.series, p.value])).toEqual([['ok.metric{h=x}', 1]]);
  });

  it('--skip-errors reports and counts bad lines and imports the rest', async () => {
    const f = join(t.dir, 'mixed.txt');
    writeFileSync(f, [
      `m.a ${T0} 1 h=x`,
      `m.a ${T0 + 1} 2`,
      `m.a notatime 3 h=x`,
      `m.a ${T0 + 3} 4 h=x`,
    ].join('\n'));
    const empty = join(t.dir, 'empty.txt');
    writeFileSync(empty, '');
    const g = join(t.dir, 'second.txt');
    writeFileSync(g, `# two\nm.a ${T0 + 9} 9 h=x\nm.a ${T0 + 10} x10 h=x\n`);
    const r = await horae(['import', '--skip-errors', '--data-dir', data, f, empty, g], {}, { batchPoints: 1 });
    expect(r.code).toBe(0);
    expect(r.err.split('\n').filter((l) => l !== '').map((l) => l.split(': ')[0])).toEqual([`${f}:2`, `${f}:3`, `${g}:3`]);
    expect(r.err).toContain(`${f}:2: not enough arguments`);
    expect(r.err).toContain(`${f}:3: Invalid character 'n' in notatime`);
    expect(r.out).toContain('imported 3 points from 3 files');
    expect(r.out).toContain('skipped 3 bad lines');
    expect((await readAll(data)).points.map((p) => p.value)).toEqual([1, 4, 9]);
  });

  it('stops at a point the writer rejects (auto-create off) with its line', async () => {
    const conf = join(t.dir, 'o.conf');
    writeFileSync(conf, 'tsd.core.auto_create_metrics = false\n');
    const f = join(t.dir, 'new.txt');
    writeFileSync(f, `never.seen ${T0} 1 h=x\n`);
    const r = await horae(['import', '--config', conf, '--data-dir', data, f]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${f}:1: No such name for 'metrics': 'never.seen'`);
  });

  it('refuses a store in use, and missing files before opening anything', async () => {
    const f = join(t.dir, 'one.txt');
    writeFileSync(f, `m.a ${T0} 1 h=x\n`);
    const missing = await horae(['import', '--data-dir', data, join(t.dir, 'nope.txt')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/cannot read .*nope\.txt/);
    const store = await openEmbeddedStore({ dir: data });
    try {
      const r = await horae(['import', '--data-dir', data, f]);
      expect(r.code).toBe(1);
      expect(r.err).toContain('is in use (stop the horae server using it first)');
    } finally {
      await store.close();
    }
    expect((await horae(['import', '--data-dir', data, f])).code).toBe(0);
  });

  it('needs at least one file', async () => {
    const r = await horae(['import', '--data-dir', data]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('import needs at least one FILE');
  });
});
