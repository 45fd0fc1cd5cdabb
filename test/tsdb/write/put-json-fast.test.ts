import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { TsdbError } from '../../../tsdb/errors.js';
import { pointOfJson } from '../../../tsdb/server/routes/put.js';
import { scanPutJson } from '../../../tsdb/write/put-json-fast.js';

const seed = Number(process.env.TEST_SEED ?? 5);

function randomPoint(r: Random, tagsPool?: readonly string[]): string {
  const ts = [`${1356998400 + r.int(1000)}`, `"${1356998400 + r.int(1000)}"`, '1356998400.5', 'null', `${1356998400000 + r.int(1000)}`][r.int(5)]!;
  const value = [`${r.int(100)}`, `${r.next() * 100}`, `"${(r.next() * 10).toFixed(2)}"`, '1e3', '-0', '"abc"', 'true', '4.0', `"${r.int(9)}"`, '"1.5e2"', '" 7"'][r.int(11)]!;
  const tags = tagsPool !== undefined ? tagsPool[r.int(tagsPool.length)]! : [`{"host":"web${r.int(3)}","dc":"x"}`, '{}', '{"host":1}', '{"h\\u006fst":"a"}', '{"host":null}', `{ "host" : "w${r.int(2)}" }`][r.int(6)]!;
  const metric = ['"sys.cpu"', '""', '"a\\"b"', '"m.é"', '42'][r.int(5)]!;
  const fields = [`"metric":${metric}`, `"timestamp":${ts}`, `"value":${value}`, `"tags":${tags}`];
  if (r.int(4) === 0) fields.push('"extra":{"x":[1,2,{"y":null}]}');
  if (r.int(10) === 0) fields.splice(r.int(fields.length), 1);
  for (let i = fields.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [fields[i], fields[j]] = [fields[j]!, fields[i]!];
  }
  return `{${fields.join(r.int(3) === 0 ? ' , ' : ',')}}`;
}

/**
 * Tags objects that repeat (the scanner skips a tags object whose bytes are the last one
 * it scanned), some of them odd, some prefixes or near copies of others.
 */
const REPEATED_TAGS = [
  '{"host":"web1","dc":"x"}', '{"host":"web1","dc":"x","rack":"7"}', '{"host":"web1","dc":"y"}', '{"host":"web1"}',
  '{"host":1}', '{"host":"web1","dc":null}', '{"h\\u006fst":"web1"}', '{}', '{"host":"web1","dc":"x" }',
];

/**
 * Checks the scan of `body` against JSON.parse and the general path; returns how many
 * datapoints were fast and how many marked as repeating the previous one's tags.
 */
function checkScan(body: string): { fast: number; sameTags: number } {
  const bytes = Buffer.from(body);
  const scan = scanPutJson(bytes);
  const parsed = JSON.parse(body) as unknown;
  expect(scan, body).toBeDefined();
  const items = Array.isArray(parsed) ? parsed : [parsed];
  expect(scan!.count).toBe(items.length);
  let fast = 0;
  let sameTags = 0;
  for (let k = 0; k < scan!.count; k++) {
    expect(JSON.parse(bytes.toString('utf8', scan!.objStart[k], scan!.objEnd[k]))).toEqual(items[k]);
    let p: ReturnType<typeof pointOfJson> | undefined;
    try {
      p = pointOfJson(items[k]);
    } catch (err) {
      if (!(err instanceof TsdbError)) throw err;
      p = undefined; // the general path rejects it (the scanner must not take it fast)
    }
    if (scan!.sameTags[k] === 1) {
      expect(scan!.fast[k] === 1 && k > 0 && scan!.fast[k - 1] === 1, body).toBe(true);
      expect(bytes.subarray(scan!.tagsStart[k], scan!.tagsEnd[k]).equals(bytes.subarray(scan!.tagsStart[k - 1], scan!.tagsEnd[k - 1])), body).toBe(true);
      sameTags++;
    }
    if (!scan!.fast[k]) continue;
    fast++;
    expect(p, `${body} #${k}: the fast path took a point the general path rejects`).toBeDefined();
    expect(Object.is(scan!.value[k], p!.value), body).toBe(true);
    expect(scan!.isInt[k] === 1, body).toBe(p!.isInt);
    expect(scan!.timestamp[k]).toBe(p!.timestamp);
    expect(bytes.toString('utf8', scan!.metricStart[k], scan!.metricEnd[k])).toBe(p!.metric);
    expect(JSON.parse(bytes.toString('utf8', scan!.tagsStart[k], scan!.tagsEnd[k]))).toEqual(Object.fromEntries(p!.tags));
  }
  return { fast, sameTags };
}

describe('/api/put JSON scanner', () => {
  it('agrees with JSON.parse + the general path when tags objects repeat', () => {
    const r = new Random(seed + 1);
    let fast = 0;
    let sameTags = 0;
    for (let round = 0; round < 300; round++) {
      const n = 1 + r.int(30);
      let tags = REPEATED_TAGS.slice(0, 1 + r.int(REPEATED_TAGS.length));
      const points = Array.from({ length: n }, () => {
        if (r.int(4) === 0) tags = REPEATED_TAGS.slice(0, 1 + r.int(REPEATED_TAGS.length));
        return randomPoint(r, r.int(3) === 0 ? tags : tags.slice(0, 1));
      });
      const c = checkScan(`[${points.join(',')}]`);
      fast += c.fast;
      sameTags += c.sameTags;
    }
    expect(fast).toBeGreaterThan(500);
    expect(sameTags).toBeGreaterThan(50);
  });

  it('reads a repeated tags object cut short by the end of the body as malformed', () => {
    const p = '{"metric":"m","timestamp":1356998400,"value":1,"tags":{"host":"web1","dc":"x"}}';
    const whole = scanPutJson(Buffer.from(`[${p},${p}]`))!;
    expect(Array.from(whole.fast.subarray(0, whole.count))).toEqual([1, 1]);
    const cut = `[${p},${p.slice(0, -4)}`;
    expect(scanPutJson(Buffer.from(cut)), cut).toBeUndefined();
  });

  it('agrees with JSON.parse + the general path on every datapoint it takes', () => {
    const r = new Random(seed);
    let fast = 0;
    for (let round = 0; round < 300; round++) {
      const n = 1 + r.int(20);
      const body = r.int(10) === 0 ? randomPoint(r) : `[${Array.from({ length: n }, () => (r.int(15) === 0 ? '42' : randomPoint(r))).join(',\n ')}]`;
      fast += checkScan(body).fast;
    }
    expect(fast).toBeGreaterThan(100);
  });

  it('hands malformed or odd bodies back to JSON.parse', () => {
    for (const body of ['', '42', '"x"', '[1,]', '[{"metric":"a",}]', '{"metric":"a"', '[{"a":01}]', '[{"a":"\u0001"}]', '[{"a":tru}]', '[] x', `${'['.repeat(100)}${']'.repeat(100)}`]) {
      expect(scanPutJson(Buffer.from(body)), body).toBeUndefined();
    }
    expect(scanPutJson(Buffer.from(' [ ] '))?.count).toBe(0);
  });
});
