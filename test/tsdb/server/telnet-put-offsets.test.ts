/**
 * Put lines by offset (line-splitter.ts pushTo, PutLines, tsdb-telnet-backend.ts) against
 * the straightforward path they replaced: the stream split into one decoded line each,
 * and every put line parsed by the plain reference (test/helpers/put-reference.ts) and
 * written as points.
 * Random and mangled lines, random chunk boundaries; the replies, in order, and every
 * stored point must be the same.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { decodeLine, LineSplitter } from '../../../tsdb/server/telnet/line-splitter.js';
import { PutLines } from '../../../tsdb/server/telnet/telnet-backend.js';
import { telnetError, tsdbTelnetBackend } from '../../../tsdb/server/telnet/tsdb-telnet-backend.js';
import { readSeries } from '../../../tsdb/query/series-reader.js';
import { TsdbError } from '../../../tsdb/errors.js';
import { refPutLine } from '../../helpers/put-reference.js';
import type { Tsdb } from '../../../tsdb/tsdb.js';
import { openFixture } from '../helpers/tsdb-fixture.js';

const seed = Number(process.env.TEST_SEED ?? 5);
const T0 = 1767225600; // 2026-01-01T00:00:00Z

function randomLine(r: Random): string {
  const host = `host=web${r.int(6)}`;
  const value = [String(r.int(100)), (r.next() * 100).toFixed(2), String(r.next()), '-3', '1e3', '2.5e-3', 'x1', '', '9223372036854775807'][r.int(9)]!;
  const ts = r.chance(0.1) ? `${(T0 + r.int(7200)) * 1000 + r.int(1000)}` : `${T0 + r.int(7200)}`;
  let line = `put sys.m${r.int(3)} ${ts} ${value} ${host}${r.chance(0.5) ? ' dc=a' : ''}`;
  for (let m = r.chance(0.3) ? r.int(3) : 0; m > 0; m--) {
    const at = r.int(line.length);
    const c = ' =.0e\t-x'[r.int(8)]!;
    line = r.chance(0.5) ? line.slice(0, at) + line.slice(at + 1) : line.slice(0, at) + c + line.slice(at);
  }
  if (r.chance(0.05)) line = ['version', 'help', '', '  put m 1 1 a=b', 'puts x', 'put', 'put m', 'caf\u00e9 x'][r.int(8)]!;
  return line + (r.chance(0.2) ? '\r' : '');
}

/** Reference framing: split on LF, one CR stripped, each line decoded on its own. */
function referenceLines(stream: Buffer): { put: boolean; text: string }[] {
  const out: { put: boolean; text: string }[] = [];
  let start = 0;
  for (let nl = stream.indexOf(10); nl !== -1; nl = stream.indexOf(10, start)) {
    let end = nl;
    if (end > start && stream[end - 1] === 13) end--;
    const b = stream.subarray(start, end);
    const put = /^put([ \t]|$)/.test(b.toString('latin1'));
    out.push({ put, text: put ? b.toString('latin1') : decodeLine(b) });
    start = nl + 1;
  }
  return out;
}

describe('telnet put lines by offset', () => {
  it('pushTo delivers the same lines, put lines as ranges of the chunk, at any chunking', () => {
    const r = new Random(seed);
    for (let round = 0; round < 200; round++) {
      const lines: Buffer[] = [];
      for (let i = r.int(80); i > 0; i--) {
        lines.push(r.chance(0.05) ? Buffer.from([0x70, 0x75, 0x74, 0x20, 0xe9, 0xff, 0x20, 0x31]) : Buffer.from(randomLine(r), 'utf8'));
        lines.push(Buffer.from('\n'));
      }
      const stream = Buffer.concat(lines);
      const s = new LineSplitter(1 << 16);
      const got: { put: boolean; text: string }[] = [];
      // Put lines are read only at the end: their ranges must stay valid after later chunks.
      const ranges: [number, Buffer, number, number][] = [];
      let off = 0;
      while (off < stream.length) {
        const n = 1 + r.int(r.chance(0.5) ? 8 : 400);
        const chunk = Buffer.from(stream.subarray(off, off + n)); // a fresh buffer per chunk, as a socket gives
        const tooLong = s.pushTo(chunk, {
          put: (b, a, e) => { ranges.push([got.length, b, a, e]); got.push({ put: true, text: '' }); return true; },
          line: (text) => { got.push({ put: false, text }); return true; },
        });
        expect(tooLong).toBe(false);
        off += n;
      }
      for (const [k, b, a, e] of ranges) got[k]!.text = b.toString('latin1', a, e);
      expect(got, `round ${round} (seed ${seed})`).toEqual(referenceLines(stream));
    }
  });

  it('the backend answers and stores exactly as the general path, for lines at any offset', async () => {
    const r = new Random(seed + 1);
    const a = await openFixture();
    const b = await openFixture();
    const backend = tsdbTelnetBackend(a.tsdb);
    for (let round = 0; round < 40; round++) {
      // One batch: lines packed into a few shared buffers, at random offsets.
      const batch = new PutLines();
      const texts: string[] = [];
      for (let n = 1 + r.int(300); n > 0;) {
        const parts: string[] = [];
        const offsets: [number, number][] = [];
        let at = r.int(5);
        let buf = ' '.repeat(at);
        for (let k = 1 + r.int(40); k > 0 && n > 0; k--, n--) {
          const line = randomLine(r).replace(/\r$/, '');
          if (!/^put[ \t]/.test(line) || line.split(/[ \t]+/).filter((w) => w !== '').length < 5) continue; // the session's checks
          offsets.push([at, at + Buffer.byteLength(line)]);
          parts.push(line);
          buf += line + '\n';
          at += Buffer.byteLength(line) + 1;
        }
        const bytes = Buffer.from(buf);
        for (let k = 0; k < offsets.length; k++) {
          batch.add(bytes, offsets[k]![0], offsets[k]![1]);
          texts.push(parts[k]!);
        }
      }
      const replies = await backend.putBatch(batch);
      expect(replies, `round ${round} (seed ${seed})`).toEqual(await generalPath(b.tsdb, texts));
    }
    expect(await dump(a.tsdb)).toEqual(await dump(b.tsdb));
    expect((await dump(a.tsdb)).length).toBeGreaterThan(0);
  });
});

describe('telnet put lines of one batch', () => {
  it('keep line order for a repeated timestamp when one line takes the fast path and the other not', async () => {
    const { tsdb } = await openFixture();
    const backend = tsdbTelnetBackend(tsdb);
    await backend.putBatch(PutLines.of([Buffer.from(`put m ${T0} 1 host=a dc=b`)]));
    // The first line's bytes are new (two spaces): the general path; the second is known.
    expect(await backend.putBatch(PutLines.of([Buffer.from(`put m ${T0 + 10} 7 host=a  dc=b`), Buffer.from(`put m ${T0 + 10} 5 host=a dc=b`)]))).toEqual([]);
    expect(await backend.putBatch(PutLines.of([Buffer.from(`put m ${T0 + 20} 5 host=a dc=b`), Buffer.from(`put m ${T0 + 20} 8 host=a  dc=b`)]))).toEqual([]);
    const got = await readSeries(tsdb, 'm', { host: 'a', dc: 'b' }, T0 * 1000, (T0 + 60) * 1000);
    expect(got.map((p) => [p.ts / 1000 - T0, p.value])).toEqual([[0, 1], [10, 5], [20, 8]]);
  });
});

/** The replies of the plain path: the reference's parse errors, then write outcomes, in line order. */
async function generalPath(tsdb: Tsdb, lines: readonly string[]): Promise<string[]> {
  const replies: (string | undefined)[] = new Array(lines.length);
  const points = [];
  const origin: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    // The words after the first (`put`).
    const p = refPutLine(decodeLine(Buffer.from(lines[i]!)).replace(/^[ \t\r]*[^ \t\r]*/, ''));
    if ('error' in p) {
      replies[i] = telnetError(new TsdbError(p.error.code as never, p.error.message));
    } else {
      points.push(p);
      origin.push(i);
    }
  }
  const outcomes = await tsdb.ingest.write(points, { admit: 'wait' });
  for (let i = 0; i < outcomes.length; i++) if (outcomes[i] !== undefined) replies[origin[i]!] = telnetError(outcomes[i]);
  return replies.filter((x): x is string => x !== undefined);
}

/** Every cell of the data table, merged per row and qualifier as a reader sees it. */
async function dump(tsdb: Tsdb): Promise<string[]> {
  const out: string[] = [];
  for await (const rows of tsdb.data.scan({})) {
    for (const row of rows) {
      for (const c of row.cells) out.push(`${Buffer.from(row.key).toString('hex')} ${Buffer.from(c.qualifier).toString('hex')} ${Buffer.from(c.value).toString('hex')}`);
    }
  }
  return out.sort();
}
