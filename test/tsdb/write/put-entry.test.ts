/**
 * The one ingest entry (Ingestor.put, tsdb/write/put-entry.ts) with a protocol of its
 * own, as the next protocols plug in: points it can scan from bytes take the known path
 * once their series was written (no parse), the rest are parsed; outcomes come back per
 * point in order, parse errors included; points of one series and timestamp keep the
 * last one whichever path each took; a protocol's byte cache is its own key space.
 */
import { describe, expect, it } from 'vitest';
import { TsdbError } from '../../../tsdb/errors.js';
import type { IncomingPoint } from '../../../tsdb/write/data-point.js';
import type { PointSource } from '../../../tsdb/write/put-entry.js';
import { openFixture } from '../helpers/tsdb-fixture.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';

const T0 = 1_356_998_400;

/** A toy protocol: `metric|tags|ts|value` lines, tags as `k=v,k=v`; `!` lines are bad. */
function toySource(lines: readonly string[], protocol = 'toy'): PointSource & { parsed: number[] } {
  const bufs = lines.map((l) => Buffer.from(l));
  const parsed: number[] = [];
  return {
    count: lines.length,
    protocol,
    parsed,
    scan(i, out) {
      const l = lines[i]!;
      const [m, tags, ts, v] = l.split('|');
      if (v === undefined || l.startsWith('!')) return false;
      out.buf = bufs[i]!;
      out.metricStart = 0;
      out.metricEnd = m!.length;
      out.tagsStart = m!.length + 1;
      out.tagsEnd = m!.length + 1 + tags!.length;
      out.timestamp = Number(ts);
      out.value = Number(v);
      out.isInt = Number.isInteger(Number(v));
      out.sameTags = false;
      return true;
    },
    parse(i): IncomingPoint {
      parsed.push(i);
      const l = lines[i]!;
      if (l.startsWith('!')) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `bad line ${i}`);
      const [metric, tags, ts, v] = l.split('|') as [string, string, string, string];
      return { metric, timestamp: Number(ts), value: Number(v), isInt: Number.isInteger(Number(v)), tags: tags.split(',').map((t) => t.split('=') as [string, string]) };
    },
  };
}

describe('Ingestor.put', () => {
  it('parses new series, takes known ones from their bytes, and answers per point in order', async () => {
    const { tsdb } = await openFixture({}, (T0 + 3600) * 1000);
    const first = toySource([`m|host=a|${T0}|1`, '!nope', `m|host=b|${T0}|2`]);
    const out1 = await tsdb.ingest.put(first);
    expect(out1.map((o) => o?.message)).toEqual([undefined, 'bad line 1', undefined]);
    expect(first.parsed).toEqual([0, 1, 2]);
    // Known series now: no parse; a new one and a bad one are parsed; same-timestamp points keep the last.
    const second = toySource([`m|host=a|${T0 + 1}|3`, `m|host=c|${T0 + 1}|4`, `m|host=a|${T0 + 1}|5`, '!again', `m|host=b|${T0 + 2}|6`]);
    const out2 = await tsdb.ingest.put(second);
    expect(out2.map((o) => o?.message)).toEqual([undefined, undefined, undefined, 'bad line 3', undefined]);
    expect(second.parsed).toEqual([1, 3]);
    expect((await readSeries(tsdb, 'm', { host: 'a' }, T0 * 1000, (T0 + 10) * 1000)).map((p) => p.value)).toEqual([1, 5]);
    expect((await readSeries(tsdb, 'm', { host: 'b' }, T0 * 1000, (T0 + 10) * 1000)).map((p) => p.value)).toEqual([2, 6]);
    expect((await readSeries(tsdb, 'm', { host: 'c' }, T0 * 1000, (T0 + 10) * 1000)).map((p) => p.value)).toEqual([4]);
    // Another protocol's cache does not know these bytes.
    const other = toySource([`m|host=a|${T0 + 3}|7`], 'other');
    await tsdb.ingest.put(other);
    expect(other.parsed).toEqual([0]);
    await tsdb.close();
  });
});
