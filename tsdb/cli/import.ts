/**
 * `horae import`: OpenTSDB's import format, one point per line as a put line without
 * `put` (`<metric> <ts> <value> <k=v>...`); blank lines and `#` comments are skipped;
 * gzip files (by `.gz` or by their magic bytes) are decompressed on the fly.
 *
 * Files are streamed (never loaded whole), parsed with parsePutLine, checked as the
 * writer checks them, and written in batches of ~10k points with 'buffered' durability
 * while the next batch is parsed; the last batch is written 'sync'. Like OpenTSDB the run
 * stops at the first bad line, reported as `file:line: message`, with every earlier line
 * written (a point the writer itself rejects, e.g. an unknown name with auto-create off,
 * is only seen after its batch is written: later points of that batch stay written).
 * With `skipErrors` bad lines are reported, counted and skipped.
 *
 * The caller opens the store (the server must not be running on it) and the Tsdb.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { isTsdbError } from '../errors.js';
import type { Tsdb } from '../tsdb.js';
import { validatePointValue, validateSeries } from '../write/data-point.js';
import type { IncomingPoint } from '../write/data-point.js';
import { newPutLineFields, parsePutLine, splitWords } from '../write/put-line.js';
import { pointsOf } from '../write/put-entry.js';
import { Progress, formatSeconds } from './progress.js';
import type { CliWriter, ProgressOptions } from './progress.js';

export interface ImportFile {
  readonly path: string;
  readonly size: number;
}

export interface ImportOptions {
  readonly skipErrors?: boolean;
  /** Points per write (default 10 000). */
  readonly batchPoints?: number;
  /** Bad lines printed with --skip-errors before only counting (default 100). */
  readonly maxReported?: number;
  readonly progress?: ProgressOptions;
}

export interface ImportResult {
  readonly points: number;
  readonly lines: number;
  readonly badLines: number;
  /** `file:line: message` of the line the import stopped at. */
  readonly stoppedAt?: string;
  readonly elapsedMs: number;
}

const GZIP_MAGIC = [0x1f, 0x8b];
const MAX_VALIDATED_SERIES = 100_000;

/** Sizes of the files to import; throws Error('cannot read F: …') for a missing one. */
export async function checkImportFiles(paths: readonly string[]): Promise<ImportFile[]> {
  const out: ImportFile[] = [];
  for (const path of paths) {
    try {
      const st = await stat(path);
      if (!st.isFile()) throw new Error('not a regular file');
      out.push({ path, size: st.size });
    } catch (err) {
      throw new Error(`cannot read ${path}: ${(err as Error).message}`);
    }
  }
  return out;
}

async function isGzip(path: string): Promise<boolean> {
  if (path.endsWith('.gz')) return true;
  const fh = await open(path, 'r');
  try {
    const buf = new Uint8Array(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === GZIP_MAGIC[0] && buf[1] === GZIP_MAGIC[1];
  } finally {
    await fh.close();
  }
}

/** The file's lines, streamed; `onBytes` is told of every chunk read from disk. */
async function* fileLines(path: string, onBytes: (n: number) => void): AsyncGenerator<string> {
  const gzip = await isGzip(path);
  const raw = createReadStream(path, { highWaterMark: 256 * 1024 });
  let input: Readable = raw;
  if (gzip) {
    const gunzip = createGunzip();
    pipeline(raw, gunzip, () => undefined); // errors surface through the iteration below
    raw.on('data', (c) => onBytes(c.length)); // after pipe(): observes, does not drop data
    input = gunzip;
  }
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for await (const chunk of input) {
      if (!gzip) onBytes((chunk as Buffer).length);
      const text = rest + decoder.write(chunk as Buffer);
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        yield text.charCodeAt(nl - 1) === 13 ? text.slice(start, nl - 1) : text.slice(start, nl);
        start = nl + 1;
      }
      rest = text.slice(start);
    }
  } finally {
    raw.destroy();
  }
  rest += decoder.end();
  if (rest.length > 0) yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}

/** Imports `files` into `tsdb`; prints progress to stderr and the summary to stdout. */
export async function importFiles(
  tsdb: Tsdb, files: readonly ImportFile[], opts: ImportOptions, io: { stdout: CliWriter; stderr: CliWriter },
): Promise<ImportResult> {
  const batchPoints = opts.batchPoints ?? 10_000;
  const maxReported = opts.maxReported ?? 100;
  const progress = new Progress(io.stderr, { label: 'import', ...opts.progress });
  const bytesTotal = files.reduce((s, f) => s + f.size, 0);
  const { maxTags, allowSpecialChars } = tsdb.config;
  const validated = new Set<string>();
  const fields = newPutLineFields();
  let bytesRead = 0;
  let points = 0;
  let lines = 0;
  let badLines = 0;
  /** The earliest bad line (by position in the input), when not skipping errors. */
  let stop: { seq: number; text: string } | undefined;
  /** A written batch had a rejected point: nothing after it may be written. */
  let writeFailed = false;
  let batch: IncomingPoint[] = [];
  /** Per batched point its input line number across all files (seq); located on error. */
  let where: number[] = [];
  const fileStarts: number[] = [];
  const locate = (seq: number): string => {
    let fi = fileStarts.length - 1;
    while (fi > 0 && fileStarts[fi]! >= seq) fi--;
    return `${files[fi]!.path}:${seq - fileStarts[fi]!}`;
  };
  let inflight: Promise<void> | undefined;

  const bad = (seq: number, message: string, fromWrite: boolean): void => {
    const at = locate(seq);
    badLines++;
    if (!opts.skipErrors) {
      if (stop === undefined || seq < stop.seq) stop = { seq, text: `${at}: ${message}` };
      writeFailed ||= fromWrite;
    } else if (badLines <= maxReported) {
      progress.finish();
      io.stderr.write(`${at}: ${message}\n`);
    }
  };
  const write = async (pts: IncomingPoint[], at: number[], durability: 'sync' | 'buffered'): Promise<void> => {
    const outcomes = await tsdb.ingest.put(pointsOf(pts), { durability, admit: 'wait' });
    for (let i = 0; i < outcomes.length; i++) {
      const o = outcomes[i];
      if (o === undefined) points++;
      else bad(at[i]!, o.message, true);
    }
  };
  /** Waits for the write in flight, then starts one for the current batch. */
  const flush = async (durability: 'sync' | 'buffered'): Promise<void> => {
    const prev = inflight;
    inflight = undefined;
    if (prev !== undefined) await prev;
    if (batch.length === 0 || writeFailed) return;
    const p = write(batch, where, durability);
    p.catch(() => undefined); // awaited later; never an unhandled rejection meanwhile
    inflight = p;
    batch = [];
    where = [];
  };

  try {
    reading: for (const f of files) {
      fileStarts.push(lines);
      for await (const line of fileLines(f.path, (n) => { bytesRead += n; })) {
        lines++;
        const words = splitWords(line);
        if (words.length === 0 || words[0]!.startsWith('#')) continue;
        try {
          const bytes = Buffer.from(line);
          const p = parsePutLine(bytes, 0, bytes.length, 0, fields);
          const key = p.seriesText;
          if (key === undefined || !validated.has(key)) {
            validateSeries(p, maxTags, allowSpecialChars);
            if (validated.size >= MAX_VALIDATED_SERIES) validated.clear();
            if (key !== undefined) validated.add(key);
          }
          validatePointValue(p);
          batch.push(p);
          where.push(lines);
        } catch (err) {
          if (!isTsdbError(err)) throw err;
          bad(lines, err.message, false);
          if (stop !== undefined) break reading;
        }
        if (batch.length >= batchPoints) {
          await flush('buffered');
          if (writeFailed) break reading;
        }
        progress.update({ bytesRead, bytesTotal, points: points + batch.length });
      }
    }
    // Also when stopped at a bad line: the lines before it stay written.
    await flush('sync');
    await inflight;
  } finally {
    await inflight?.catch(() => undefined);
    progress.finish();
  }

  const stoppedAt = stop?.text;
  const elapsedMs = progress.elapsedMs();
  if (stoppedAt !== undefined) io.stderr.write(`${stoppedAt}\n`);
  if (badLines > maxReported && opts.skipErrors) io.stderr.write(`... ${badLines - maxReported} more bad lines not shown\n`);
  const rate = elapsedMs > 0 ? Math.round((points * 1000) / elapsedMs) : points;
  const skipped = opts.skipErrors && badLines > 0 ? `, skipped ${badLines} bad lines` : '';
  io.stdout.write(`imported ${points} points from ${files.length} files in ${formatSeconds(elapsedMs)} s (${rate} points/s)${skipped}\n`);
  return { points, lines, badLines, elapsedMs, ...(stoppedAt === undefined ? {} : { stoppedAt }) };
}

/** Compresses the closed hours the import wrote into; prints what it did. */
export async function compactAfterImport(tsdb: Tsdb, io: { stdout: CliWriter; stderr: CliWriter }): Promise<void> {
  if (!tsdb.config.compactHours) return;
  const before = tsdb.compactor.stats();
  const t0 = Date.now();
  await tsdb.compactor.runOnce({ force: true, sweep: false });
  const after = tsdb.compactor.stats();
  if (after.errors > before.errors) {
    io.stderr.write(`horae import: compressing closed hours failed: ${after.lastError ?? 'unknown error'} (the server retries later)\n`);
  }
  const rows = after.rowsCompacted - before.rowsCompacted;
  if (rows > 0) io.stdout.write(`compressed ${rows} closed series-hours in ${formatSeconds(Date.now() - t0)} s\n`);
}
