/**
 * The telnet backend over a Tsdb: parses `put` words (write/line-parser.ts), writes the
 * good points of a batch in one call, and words failures as OpenTSDB does:
 *   put: illegal argument: <msg>   (validation)
 *   put: invalid value: <msg>      (a number that does not parse)
 *   put: unknown metric: <msg>     (auto-create off and the name has no UID)
 * Storage failures reject the batch; the session answers `put: HBase error: …` per line
 * (only when `telnetReturnErrors`, as tsd.rpc.telnet.return_errors).
 */
import { TsdbError } from '../../errors.js';
import type { Tsdb } from '../../tsdb.js';
import { VERSION } from '../../version.js';
import type { IncomingPoint } from '../../write/data-point.js';
import { parsePutWords } from '../../write/line-parser.js';
import type { TelnetBackend } from './telnet-backend.js';

export function tsdbTelnetBackend(tsdb: Tsdb, status: () => string = () => 'ok'): TelnetBackend {
  return {
    async putBatch(batch) {
      const replies: string[] = new Array(batch.length);
      const points: IncomingPoint[] = [];
      const origin: number[] = [];
      for (let i = 0; i < batch.length; i++) {
        try {
          points.push(parsePutWords(batch[i]!));
          origin.push(i);
        } catch (err) {
          replies[i] = telnetError(err);
        }
      }
      if (points.length > 0) {
        let outcomes;
        try {
          outcomes = await tsdb.ingest.write(points, { admit: 'wait' });
        } catch (err) {
          if (!tsdb.config.telnetReturnErrors) return [];
          throw err;
        }
        for (let i = 0; i < outcomes.length; i++) {
          const o = outcomes[i];
          if (o !== undefined) replies[origin[i]!] = telnetError(o);
        }
      }
      return replies.filter((r) => r !== undefined);
    },
    overloaded: () => tsdb.ingest.overloaded(),
    whenWritable: () => tsdb.ingest.whenWritable(),
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
