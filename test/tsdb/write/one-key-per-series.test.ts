/**
 * One key per series on the telnet path (tsdb/write/ingest.ts put): a series written over
 * a protocol with a byte cache is found by its bytes, and its text is not kept beside
 * them. A point whose bytes the cache lost is resolved again by name without creating or
 * re-admitting its series (its entry is live), and teaches the cache its bytes again.
 */
import { describe, expect, it } from 'vitest';
import { parsePutLine } from '../../../tsdb/write/put-line.js';
import { putLineSource } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import { PutLines } from '../../../tsdb/server/telnet/telnet-backend.js';
import type { PointSource } from '../../../tsdb/write/put-entry.js';
import { openFixture, pt } from '../helpers/tsdb-fixture.js';

const T0 = 1_767_225_600;
const SERIES = 50;

function lines(t: number): { batch: PutLines; buf: Uint8Array } {
  let text = '';
  for (let i = 0; i < SERIES; i++) text += `put m.${i % 5} ${t} ${i} host=h${i} dc=d${i % 3}\n`;
  const buf = new TextEncoder().encode(text);
  const batch = new PutLines();
  for (let s = 0, e = buf.indexOf(10); e >= 0; s = e + 1, e = buf.indexOf(10, s)) batch.add(buf, s, e);
  return { batch, buf };
}

describe('a telnet series', () => {
  it('is kept by its bytes only, and found again by name when the bytes are lost', async () => {
    const { tsdb } = await openFixture({}, (T0 + 60) * 1000);
    try {
      const put = async (t: number): Promise<void> => {
        const out = await tsdb.ingest.put(putLineSource(lines(t).batch), { admit: 'wait' });
        expect(out.every((o) => o === undefined)).toBe(true);
      };
      await put(T0);
      const cache = tsdb.catalog.series.bytes('telnet');
      expect([tsdb.catalog.series.size, cache.size]).toEqual([SERIES, SERIES]);
      // No text kept: a parsed point of the series is not found by its text.
      const { buf } = lines(T0);
      const first = parsePutLine(buf, 0, buf.indexOf(10), 4);
      expect([first.metric, first.tags.length]).toEqual(['m.0', 2]);
      expect(tsdb.ingest.entryOf(first)).toBeUndefined();
      const created = tsdb.ingest.stats().seriesCreated;
      expect(created).toBe(SERIES);
      await put(T0 + 1); // by bytes
      cache.clear(); // the bytes lost (a rotation of the byte cache)
      await put(T0 + 2);
      expect([tsdb.ingest.stats().seriesCreated, tsdb.ingest.stats().seriesReadmitted]).toEqual([SERIES, 0]);
      expect(cache.size).toBe(SERIES);
      expect(tsdb.catalog.series.size).toBe(SERIES);
    } finally {
      await tsdb.close();
    }
  });

  it('keeps the text of a point its protocol cannot scan, so its next point is found by it', async () => {
    const { tsdb } = await openFixture({}, (T0 + 60) * 1000);
    try {
      const p = pt('m.scanless', T0, 1, { host: 'a' });
      const source: PointSource = { count: 1, protocol: 'scanless', scan: () => false, parse: () => p };
      expect(await tsdb.ingest.put(source)).toEqual([undefined]);
      expect(tsdb.ingest.entryOf(p)).toBeDefined();
      const before = tsdb.ingest.stats();
      expect(await tsdb.ingest.put({ ...source, parse: () => pt('m.scanless', T0 + 1, 2, { host: 'a' }) })).toEqual([undefined]);
      expect(tsdb.ingest.stats().seriesCreated).toBe(before.seriesCreated);
    } finally {
      await tsdb.close();
    }
  });
});
