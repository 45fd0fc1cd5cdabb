/**
 * The telnet backend over a Tsdb: parses `put` words (write/line-parser.ts), writes the
 * good points of a batch in one call, and words failures as OpenTSDB does:
 *   put: illegal argument: <msg>   (validation)
 *   put: invalid value: <msg>      (a number that does not parse)
 *   put: unknown metric: <msg>     (auto-create off and the name has no UID)
 * Lines of series seen before take a byte-level fast path, parsed where they lie in the
 * received chunks (no strings, no objects); the others, and any line the fast parser
 * declines, take the general parser. Both kinds join the write in line order.
 * Storage failures reject the batch; the session answers `put: HBase error: …` per line
 * (only when `telnetReturnErrors`, as tsd.rpc.telnet.return_errors).
 */
import { TsdbError } from '../../errors.js';
import type { Tsdb } from '../../tsdb.js';
import { VERSION } from '../../version.js';
import type { IncomingPoint } from '../../write/data-point.js';
import { KnownSeriesPoints } from '../../write/ingest.js';
import { parsePutWords } from '../../write/line-parser.js';
import { newFastPut, parsePutFast } from '../../write/put-line-fast.js';
import { putWords } from './line-splitter.js';
import type { TelnetBackend } from './telnet-backend.js';

export function tsdbTelnetBackend(tsdb: Tsdb, status: () => string = () => 'ok'): TelnetBackend {
  const byBytes = tsdb.catalog.series.bytes('telnet');
  const fast = newFastPut();
  return {
    async putBatch(batch) {
      const n = batch.count;
      let replies: (string | undefined)[] | undefined;
      // Lines of known series, parsed from the chunks by offset (put-line-fast.ts); the rest go the general way.
      const known = KnownSeriesPoints.take(n);
      const points: IncomingPoint[] = [];
      const origin: number[] = [];
      for (let i = 0; i < n; i++) {
        const buf = batch.buf(i);
        if (parsePutFast(buf, batch.start(i), batch.end(i), fast)) {
          const e = byBytes.get(buf, fast.metricStart, fast.metricEnd, fast.tagsStart, fast.tagsEnd);
          if (e !== undefined) {
            known.add(e, fast.timestamp, fast.value, fast.isInt, points.length);
            continue;
          }
        }
        try {
          points.push(parsePutWords(putWords(batch.line(i))));
          origin.push(i);
        } catch (err) {
          (replies ??= new Array<string | undefined>(n))[i] = telnetError(err);
        }
      }
      let outcomes;
      try {
        outcomes = await tsdb.ingest.write(points, { admit: 'wait' }, known);
      } catch (err) {
        if (!tsdb.config.telnetReturnErrors) return [];
        throw err;
      } finally {
        known.release();
      }
      for (let i = 0; i < outcomes.length; i++) {
        const o = outcomes[i];
        const k = origin[i]!;
        const buf = batch.buf(k);
        if (o !== undefined) {
          (replies ??= new Array<string | undefined>(n))[k] = telnetError(o);
        } else if (parsePutFast(buf, batch.start(k), batch.end(k), fast)) {
          // Teach the byte cache this series, so its next lines take the fast path.
          const e = tsdb.ingest.entryOf(points[i]!);
          if (e !== undefined) byBytes.set(buf, fast.metricStart, fast.metricEnd, fast.tagsStart, fast.tagsEnd, e);
        }
      }
      return replies === undefined ? [] : replies.filter((r): r is string => r !== undefined);
    },
    overloaded: () => tsdb.ingest.overloaded(),
    whenWritable: () => tsdb.ingest.whenWritable(),
    writerBlocked: () => tsdb.ingest.writerBlocked(),
    versionLines: () => versionLines(),
    async statsLines() {
      return (await tsdb.statsPoints()).map((p) => `${p.metric} ${p.timestamp} ${p.value}${Object.entries(p.tags).map(([k, v]) => ` ${k}=${v}`).join('')}`);
    },
    async dropCaches() {
      tsdb.dropCaches();
    },
    status,
  };
}

/** OpenTSDB's two `version` lines, naming Horae. */
export function versionLines(): string[] {
  return [`net.opentsdb.tools horae-${VERSION} built at revision horae (MINT)`, `Built on 2026/11/21 by horae@localhost:/horae`];
}

/** One failed put as OpenTSDB's telnet words it. */
export function telnetError(err: unknown): string {
  if (err instanceof TsdbError) {
    switch (err.code) {
      case 'TSDB_INVALID_VALUE':
        return `put: invalid value: ${err.message}`;
      case 'TSDB_NO_SUCH_NAME':
        return `put: unknown metric: ${err.message}`;
      case 'TSDB_OVERLOADED':
        return `put: Please throttle writes: ${err.message}`;
      case 'TSDB_ILLEGAL_ARGUMENT':
        return `put: illegal argument: ${err.message}`;
      default:
        return `put: HBase error: ${err.message}`;
    }
  }
  return `put: HBase error: ${(err as Error).message}`;
}
