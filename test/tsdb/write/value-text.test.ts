/**
 * One value reader (tsdb/write/number-text.ts): the same value text sent over telnet
 * (`put` line), as a JSON put's string value and as a msgpack put's string value gives the
 * same typed value (value, isInt, big) or the same error (code and message). Value texts
 * from a list of edge cases and at random (digits, signs, dots, exponents, suffixes,
 * named values, stray letters).
 */
import { describe, expect, it } from 'vitest';
import { pack, unpack } from 'msgpackr';
import { Random } from '../../../core/util/random.js';
import { isTsdbError } from '../../../tsdb/errors.js';
import { pointOfJson } from '../../../tsdb/server/routes/put.js';
import { scanPutJson } from '../../../tsdb/write/put-json.js';
import { jsonPoint } from '../../../tsdb/write/put-json-point.js';
import { newPutLineFields, putLinePoint, readPutLine } from '../../../tsdb/write/put-line.js';

type Answer = { value: number; isInt: boolean; big?: bigint } | { code: string; message: string };

function answer(f: () => { value: number; isInt: boolean; big?: bigint }): Answer {
  try {
    const p = f();
    return { value: p.value, isInt: p.isInt, ...(p.big === undefined ? {} : { big: p.big }) };
  } catch (e) {
    if (!isTsdbError(e)) throw e;
    return { code: e.code, message: e.message };
  }
}

function telnet(text: string): Answer {
  const line = Buffer.from(`put m 1700000000 ${text} host=a`, 'utf8');
  const f = newPutLineFields();
  return answer(() => {
    const err = readPutLine(line, 0, line.length, 3, f);
    if (err !== undefined) throw err;
    return putLinePoint(line, 0, line.length, f);
  });
}

function json(text: string): Answer {
  const body = Buffer.from(JSON.stringify({ metric: 'm', timestamp: 1700000000, value: text, tags: { host: 'a' } }));
  return answer(() => jsonPoint(body, scanPutJson(body), 0));
}

function msgpack(text: string): Answer {
  const decoded: unknown = unpack(pack({ metric: 'm', timestamp: 1700000000, value: text, tags: { host: 'a' } }));
  return answer(() => pointOfJson(decoded));
}

const CASES = [
  '0', '42', '-7', '+42', '007', '42.5', '.5', '5.', '-.5', '1e3', '1E3', '1e+3', '1e-3', '2.5f', '2.5D', '1f', '1e', 'e3', '.', '-', '+',
  '9007199254740993', '9223372036854775807', '-9223372036854775808', '9223372036854775808', '-9223372036854775809',
  '18446744073709551615', '123456789012345678901234', '3.2409553039854025e-05', '1e400', '-1e400', '1e-400',
  'NaN', '-NaN', 'Infinity', '-Infinity', '+Infinity', 'nan', 'inf', '12abc', '1.2.3', '0x10', '1_000', '1,5', 'ℯ',
];

function randomText(r: Random): string {
  const parts = ['', '-', '+'][r.int(3)]!;
  let s = parts;
  for (let i = r.int(22); i >= 0; i--) s += '0123456789'[r.int(10)]!;
  if (r.chance(0.4)) {
    s += '.';
    for (let i = r.int(8); i > 0; i--) s += '0123456789'[r.int(10)]!;
  }
  if (r.chance(0.3)) s += ['e', 'E'][r.int(2)]! + ['', '-', '+'][r.int(3)]! + String(r.int(400));
  if (r.chance(0.1)) s += 'fFdDxa'[r.int(6)]!;
  if (r.chance(0.05)) s = s.slice(0, r.int(s.length + 1)) + 'aZ.'[r.int(3)]! + s.slice(r.int(s.length + 1));
  return s;
}

describe('a value text read by telnet, JSON and msgpack', () => {
  it('gives the same value or the same error over all three', () => {
    const r = new Random(Number(process.env.TEST_SEED ?? 33));
    const texts = [...CASES];
    for (let i = 0; i < 3000; i++) texts.push(randomText(r));
    let values = 0;
    let errors = 0;
    for (const text of texts) {
      const want = telnet(text);
      expect(json(text), `JSON "${text}"`).toEqual(want);
      expect(msgpack(text), `msgpack "${text}"`).toEqual(want);
      if ('code' in want) errors++;
      else values++;
    }
    expect(values).toBeGreaterThan(1000);
    expect(errors).toBeGreaterThan(100);
  });

  it('reads a blank string the same in JSON and msgpack', () => {
    for (const text of ['', '  ', ' 42 ']) {
      const body = Buffer.from(JSON.stringify({ metric: 'm', timestamp: 1700000000, value: text, tags: { host: 'a' } }));
      expect(msgpack(text), JSON.stringify(text)).toEqual(answer(() => jsonPoint(body, scanPutJson(body), 0)));
    }
  });
});
