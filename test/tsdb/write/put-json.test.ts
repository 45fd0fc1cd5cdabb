/**
 * The /api/put JSON parser (tsdb/write/put-json.ts, put-json-point.ts) against a plain
 * reference (JSON.parse and OpenTSDB's datapoint rules, test/helpers/put-reference.ts) on
 * random valid and invalid bodies: the body's error or every datapoint's point or error,
 * and the numbers of datapoints read whole.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../../core/util/random.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { READ_WHOLE, scanPutJson } from '../../../tsdb/write/put-json.js';
import { jsonPoint } from '../../../tsdb/write/put-json-point.js';
import { newScannedPoint, writableAsScanned } from '../../../tsdb/write/put-entry.js';
import { refJsonBody } from '../../helpers/put-reference.js';
import type { RefError, RefPoint } from '../../helpers/put-reference.js';

const seed = Number(process.env.TEST_SEED ?? 5);

function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(xs.length)]!;
}

function randomPoint(r: Random, tagsPool?: readonly string[]): string {
  const ts = pick(r, [`${1356998400 + r.int(1000)}`, `"${1356998400 + r.int(1000)}"`, `${1356998400000 + r.int(1000)}`, '1356998400.5', '1356998400.0', '1.3569984e9',
    'null', '0', '-5', '"0"', '"\\u0031356998400"', '" 1356998400"', '"1356998400x"', '99999999999999999', '1e400', 'true', '[1]', '{}', '"12345678901234567890"']);
  const value = pick(r, [`${r.int(100)}`, `${r.next() * 100}`, `"${(r.next() * 10).toFixed(2)}"`, '1e3', '-0', '"-0"', '"abc"', 'true', 'false', '4.0', `"${r.int(9)}"`, '"1.5e2"',
    '" 7"', '"7\\t"', '"\\u00a07"', '"\u00a07"', '""', '"  "', 'null', '{}', '[]', '1e400', '12345678901234567890', '"9223372036854775807"', '"18446744073709551615"',
    '"-9223372036854775809"', '"NaN"', '"-Infinity"', '"1f"', '"1.5f"', '"\\u0031"', '"١"', '1.7976931348623157e308', '5e-324', '-1.5E-3']);
  const tags = tagsPool !== undefined ? pick(r, tagsPool) : pick(r, [`{"host":"web${r.int(3)}","dc":"x"}`, '{}', '{"host":1}', '{"host":1.0}', '{"host":1e21}', '{"host":-0}',
    '{"h\\u006fst":"a"}', '{"host":null}', `{ "host" : "w${r.int(2)}" }`, '{"b":"1","10":"x","2":"y","a":"z","01":"w"}', '{"host":"a","host":"b"}',
    '{"host":true,"host":"ok"}', '{"host":"ok","host":[1]}', '{"4294967295":"a","4294967294":"b"}', '{"__proto__":"x"}', '{"k":"caf\u00e9","k2":"\\ud83d\\ude00"}',
    '{"k":"\\"q\\\\"}', '[]', '"x"', 'null', '{"k":{"x":1}}']);
  const metric = pick(r, ['"sys.cpu"', '""', '"a\\"b"', '"m.é"', '42', 'null', '"\\u006d"', '"m\\/x"', '[]']);
  // Points of a repeated tags pool are mostly plain, so that runs of them are read whole.
  const plain = tagsPool !== undefined && r.chance(0.8);
  const fields = plain
    ? [`"metric":"sys.cpu${r.int(3)}"`, `"timestamp":${1356998400 + r.int(1000)}`, `"value":${r.int(100)}`, `"tags":${tags}`]
    : [`"metric":${metric}`, `"timestamp":${ts}`, `"value":${value}`, `"tags":${tags}`];
  if (r.int(4) === 0) fields.push(pick(r, ['"extra":{"x":[1,2,{"y":null}]}', '"met\\u0072ic":"escaped.key"', '"value":5', '"tags":{"z":"1"}', '"metric":"again"', '"deep":[[[[[[[[[[1]]]]]]]]]]']));
  if (r.int(10) === 0) fields.splice(r.int(fields.length), 1);
  for (let i = fields.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [fields[i], fields[j]] = [fields[j]!, fields[i]!];
  }
  return `{${fields.join(r.int(3) === 0 ? ' ,\n ' : ',')}}`;
}

/**
 * Tags objects that repeat (the scan skips a tags object whose bytes are the last one it
 * scanned), some of them odd, some prefixes or near copies of others.
 */
const REPEATED_TAGS = [
  '{"host":"web1","dc":"x"}', '{"host":"web1","dc":"x","rack":"7"}', '{"host":"web1","dc":"y"}', '{"host":"web1"}',
  '{"host":1}', '{"host":"web1","dc":null}', '{"h\\u006fst":"web1"}', '{}', '{"host":"web1","dc":"x" }',
];

function randomBody(r: Random, tagsPool?: () => readonly string[]): string {
  if (r.int(15) === 0) return pick(r, ['42', '"x"', 'null', 'true', ' [ ] ', '[]', '{}', `${'['.repeat(200)}${']'.repeat(200)}`, '[1,"a",null,[],{}]']);
  if (r.int(10) === 0) return randomPoint(r, tagsPool?.());
  const n = 1 + r.int(20);
  return `[${Array.from({ length: n }, () => (r.int(15) === 0 ? pick(r, ['42', '"p"', 'null', '[{}]']) : randomPoint(r, tagsPool?.()))).join(r.int(2) === 0 ? ',' : ',\n ')}]`;
}

/** The body's bytes, now and then mangled (a byte deleted, inserted or replaced; a byte that is not UTF-8). */
function bodyBytes(r: Random, text: string): Buffer {
  let b = Buffer.from(text);
  if (r.chance(0.8)) return b;
  for (let m = 1 + r.int(2); m > 0; m--) {
    const at = r.int(b.length + 1);
    const c = Buffer.of(pick(r, [0x22, 0x5c, 0x2c, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x20, 0x31, 0x65, 0x2e, 0x2d, 0xff, 0xc3, 0x0a, 0x01]));
    b = r.chance(0.3) ? Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]) : Buffer.concat([b.subarray(0, at), c, b.subarray(at + (r.chance(0.5) ? 1 : 0))]);
  }
  return b;
}

/** The body as the parser answers it, shaped as the reference's. */
function ours(bytes: Buffer): RefPoint[] | RefError[] | string {
  const scan = scanPutJson(bytes);
  if (scan.error !== undefined) return scan.error;
  return Array.from({ length: scan.count }, (_, k) => {
    try {
      const p = jsonPoint(bytes, scan, k);
      return { metric: p.metric, timestamp: p.timestamp, value: p.value, isInt: p.isInt, ...(p.big === undefined ? {} : { big: p.big }), tags: p.tags.map(([a, b]) => [a, b]), seriesText: p.seriesText! };
    } catch (e) {
      if (!isTsdbError(e)) throw e;
      return { error: { code: e.code, message: e.message } };
    }
  }) as RefPoint[] | RefError[];
}

/** Errors a datapoint read whole with writable numbers may still have: its series' (the byte cache never holds such bytes). */
const SERIES_ERRORS = /^(Missing tags|Invalid tag value for .*|Metric name was empty)$/;

/** Checks `bytes` against the reference; counts datapoints read whole and those marked as repeating the previous one's tags. */
function check(bytes: Buffer, counts: { whole: number; sameTags: number; points: number; errors: number; bodies: number }): void {
  const text = bytes.toString('utf8');
  const want = refJsonBody(text);
  expect(ours(bytes), text).toEqual(want);
  if (typeof want === 'string') {
    counts.bodies++;
    return;
  }
  const scan = scanPutJson(bytes);
  for (let k = 0; k < scan.count; k++) {
    const w = want[k]!;
    if ('error' in w) counts.errors++;
    else counts.points++;
    if (scan.sameTags[k] === 1) {
      expect(scan.kind[k] === READ_WHOLE && k > 0 && scan.kind[k - 1] === READ_WHOLE, text).toBe(true);
      expect(bytes.subarray(scan.tagsStart[k], scan.tagsEnd[k]).equals(bytes.subarray(scan.tagsStart[k - 1], scan.tagsEnd[k - 1])), text).toBe(true);
      counts.sameTags++;
    }
    if (scan.kind[k] !== READ_WHOLE) continue;
    counts.whole++;
    if ('error' in w) {
      // The known-series path takes it only with numbers it may write as they are.
      const sp = { ...newScannedPoint(), timestamp: scan.timestamp[k]!, value: scan.value[k]! };
      if (writableAsScanned(sp)) expect(w.error.message, `${text} #${k}: read whole, but its numbers are wrong`).toMatch(SERIES_ERRORS);
      continue;
    }
    expect(Object.is(scan.value[k], w.value) && (scan.isInt[k] === 1) === w.isInt && scan.timestamp[k] === w.timestamp && w.big === undefined, `${text} #${k}`).toBe(true);
  }
}

describe('/api/put JSON parser', () => {
  it('answers random bodies, valid and not, as JSON.parse and the reference rules do', () => {
    const r = new Random(seed);
    const counts = { whole: 0, sameTags: 0, points: 0, errors: 0, bodies: 0 };
    for (let round = 0; round < 3000; round++) check(bodyBytes(r, randomBody(r)), counts);
    expect(counts.whole).toBeGreaterThan(300);
    expect(counts.points).toBeGreaterThan(1000);
    expect(counts.errors).toBeGreaterThan(5000);
    expect(counts.bodies).toBeGreaterThan(300);
  });

  it('answers as the reference when tags objects repeat', () => {
    const r = new Random(seed + 1);
    const counts = { whole: 0, sameTags: 0, points: 0, errors: 0, bodies: 0 };
    for (let round = 0; round < 500; round++) {
      let tags = REPEATED_TAGS.slice(0, 1 + r.int(REPEATED_TAGS.length));
      check(bodyBytes(r, randomBody(r, () => {
        if (r.int(4) === 0) tags = REPEATED_TAGS.slice(0, 1 + r.int(REPEATED_TAGS.length));
        return r.int(3) === 0 ? tags : tags.slice(0, 1);
      })), counts);
    }
    expect(counts.whole).toBeGreaterThan(60);
    expect(counts.sameTags).toBeGreaterThan(50);
  });

  it('reads a repeated tags object cut short by the end of the body as bad JSON', () => {
    const p = '{"metric":"m","timestamp":1356998400,"value":1,"tags":{"host":"web1","dc":"x"}}';
    const whole = scanPutJson(Buffer.from(`[${p},${p}]`));
    expect(Array.from(whole.kind.subarray(0, whole.count))).toEqual([READ_WHOLE, READ_WHOLE]);
    const cut = `[${p},${p.slice(0, -4)}`;
    expect(scanPutJson(Buffer.from(cut)).error, cut).toBe('Unable to parse the given JSON');
  });

  it('answers odd bodies with OpenTSDB\'s messages', () => {
    const error = (body: string): string | undefined => scanPutJson(Buffer.from(body)).error;
    for (const body of ['', ' ', '[1,]', '[{"metric":"a",}]', '{"metric":"a"', '[{"a":01}]', '[{"a":"\u0001"}]', '[{"a":tru}]', '[] x', '\ufeff[]']) {
      expect(error(body), body).toBe('Unable to parse the given JSON');
    }
    expect(error('42')).toBe('The JSON must start as an object or an array');
    expect(error('"x"')).toBe('The JSON must start as an object or an array');
    expect(error(' null ')).toBe('Missing request content');
    expect(scanPutJson(Buffer.from(' [ ] ')).count).toBe(0);
    // Nesting of any depth, as JSON.parse takes it.
    const deep = `[${'['.repeat(5000)}${']'.repeat(5000)}]`;
    expect(scanPutJson(Buffer.from(deep)).count).toBe(1);
  });
});
