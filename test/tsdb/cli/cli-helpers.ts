/**
 * Test helpers for the `horae` command line: captured output writers, temporary data
 * directories, and a reader that lists every stored point (row key decoded, UIDs named,
 * cells merged with mergeRowCells) so tests check what a query would see.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '../../../core/index.js';
import type { CliIo } from '../../../tsdb/cli/run-cli.js';
import { runCli } from '../../../tsdb/cli/run-cli.js';
import type { TsdbConfig } from '../../../tsdb/config.js';
import { needsCompaction } from '../../../tsdb/compact/hour-compactor.js';
import { mergeRowCells } from '../../../tsdb/query/row-merge.js';
import { decodeRowKey } from '../../../tsdb/schema/row-key.js';
import { Tsdb } from '../../../tsdb/tsdb.js';

export interface Captured {
  readonly io: CliIo;
  out(): string;
  err(): string;
}

export function capture(importOptions?: CliIo['importOptions']): Captured {
  let out = '';
  let err = '';
  return {
    io: {
      stdout: { write: (s: string) => { out += s; } },
      stderr: { write: (s: string) => { err += s; } },
      ...(importOptions === undefined ? {} : { importOptions }),
    },
    out: () => out,
    err: () => err,
  };
}

/** Runs `horae ARGV` in-process with an empty environment. */
export async function horae(argv: string[], env: Record<string, string> = {}, importOptions?: CliIo['importOptions']) {
  const c = capture(importOptions);
  const code = await runCli(argv, env, c.io);
  return { code, out: c.out(), err: c.err() };
}

/** A fresh temporary directory; call the returned cleanup in afterEach. */
export function tempDir(prefix = 'horae-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface StoredPoint {
  readonly series: string;
  /** ms */
  readonly ts: number;
  readonly value: number;
}

/** Opens the store at `dir`, runs `fn` on a Tsdb over it, closes both. */
export async function withTsdb<T>(dir: string, fn: (tsdb: Tsdb) => Promise<T>, config: Partial<TsdbConfig> = {}): Promise<T> {
  const store = await openEmbeddedStore({ dir });
  try {
    const tsdb = await Tsdb.open(store, { config, background: false });
    try {
      return await fn(tsdb);
    } finally {
      await tsdb.close();
    }
  } finally {
    await store.close();
  }
}

/** Every point in the store as `metric{k=v,...}`, sorted; and rows still needing compaction. */
export async function readAll(dir: string): Promise<{ points: StoredPoint[]; uncompactedRows: number }> {
  return withTsdb(dir, async (tsdb) => {
    const points: StoredPoint[] = [];
    let uncompactedRows = 0;
    for await (const rows of tsdb.data.scan()) {
      for (const row of rows) {
        const k = decodeRowKey(tsdb.widths, row.key);
        const metric = await tsdb.metrics.getName(k.metric);
        const tags: string[] = [];
        for (const [tk, tv] of k.tags) tags.push(`${await tsdb.tagks.getName(tk)}=${await tsdb.tagvs.getName(tv)}`);
        const series = `${metric}{${tags.sort().join(',')}}`;
        const b = mergeRowCells(row.cells);
        for (let i = 0; i < b.count; i++) points.push({ series, ts: k.baseTimeSec * 1000 + b.offsetsMs[i]!, value: b.values[i]! });
        if (needsCompaction(row.cells)) uncompactedRows++;
      }
    }
    points.sort((a, b) => (a.series < b.series ? -1 : a.series > b.series ? 1 : a.ts - b.ts));
    return { points, uncompactedRows };
  });
}
