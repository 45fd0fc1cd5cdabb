/**
 * The telnet backend over a Tsdb: reads `put` lines (write/put-line.ts), writes the
 * good points of a batch in one call, and words failures as OpenTSDB does:
 *   put: illegal argument: <msg>   (validation)
 *   put: invalid value: <msg>      (a number that does not parse)
 *   put: unknown metric: <msg>     (auto-create off and the name has no UID)
 * The lines go to the one ingest entry (Ingestor.put) as a source: read where they lie in
 * the received chunks (no strings, no objects), and named only when their series' bytes
 * are not known yet; both kinds join the write in line order.
 * Storage failures reject the batch; the session answers `put: HBase error: …` per line
 * (only when `telnetReturnErrors`, as tsd.rpc.telnet.return_errors).
 */
import { TsdbError } from '../../errors.js';
import type { MemoryGuard } from '../../memory/guard.js';
import type { Tsdb } from '../../tsdb.js';
import { VERSION } from '../../version.js';
import type { PointSource } from '../../write/put-entry.js';
import { parsePutLine, readPutLine } from '../../write/put-line.js';
import type { PutLines, TelnetBackend } from './telnet-backend.js';

/**
 * `memory` (memory/guard.ts): while the heap is past the budget, sessions stop reading and
 * the put lines a batch holds are answered with `put: Please throttle writes: memory over
 * budget …`, none of them written.
 */
export function tsdbTelnetBackend(tsdb: Tsdb, status: () => string = () => 'ok', memory?: MemoryGuard): TelnetBackend {
  const overloaded = (): boolean => tsdb.ingest.overloaded() || memory?.over() === true;
  return {
    async putBatch(batch) {
      if (memory?.check() === true) {
        if (!tsdb.config.telnetReturnErrors) return [];
        const refused = telnetError(memory.refuse());
        return Array.from({ length: batch.count }, () => refused);
      }
      let outcomes;
      try {
        outcomes = await tsdb.ingest.put(putLineSource(batch), { admit: 'wait' });
      } catch (err) {
        if (!tsdb.config.telnetReturnErrors) return [];
        throw err;
      }
      const replies: string[] = [];
      for (const o of outcomes) if (o !== undefined) replies.push(telnetError(o));
      return replies;
    },
    overloaded,
    async whenWritable() {
      while (overloaded()) await (tsdb.ingest.overloaded() ? tsdb.ingest.whenWritable() : memory!.whenUnder());
    },
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

/**
 * A batch of `put` lines as the ingest entry reads them (write/put-entry.ts): read where
 * they lie in the received chunks (write/put-line.ts), the words after `put`.
 */
export function putLineSource(batch: PutLines): PointSource {
  return {
    count: batch.count,
    protocol: 'telnet',
    scan(i, out) {
      const buf = batch.buf(i);
      const start = batch.start(i);
      out.buf = buf;
      out.sameTags = false;
      return readPutLine(buf, start, batch.end(i), start + 3, out) === undefined;
    },
    parse(i) {
      const start = batch.start(i);
      return parsePutLine(batch.buf(i), start, batch.end(i), start + 3);
    },
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
      case 'TSDB_LIMIT_EXCEEDED':
        return `put: limit exceeded: ${err.message}`;
      default:
        return `put: HBase error: ${err.message}`;
    }
  }
  return `put: HBase error: ${(err as Error).message}`;
}
