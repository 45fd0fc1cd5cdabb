/**
 * Plain references for the put parsers (tsdb/write/put-line.ts, put-json.ts with
 * put-json-point.ts): OpenTSDB's rules for a put line and a JSON datapoint restated on
 * strings with regexes, Number, BigInt and JSON.parse, slow and obviously so. A result is
 * the point's fields or the error's code and message.
 */

export interface RefPoint {
  metric: string;
  timestamp: number;
  value: number;
  isInt: boolean;
  big?: bigint;
  tags: Array<[string, string]>;
  seriesText: string;
}

export interface RefError {
  error: { code: string; message: string };
}

class RefFail extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const illegal = (m: string): RefFail => new RefFail('TSDB_ILLEGAL_ARGUMENT', m);
const invalid = (m: string): RefFail => new RefFail('TSDB_INVALID_VALUE', m);

function run(f: () => RefPoint): RefPoint | RefError {
  try {
    return f();
  } catch (e) {
    if (e instanceof RefFail) return { error: { code: e.code, message: e.message } };
    throw e;
  }
}

/** A value's text typed as OpenTSDB's put path types it (integers in int64, else doubles). */
export function refValue(s: string): { value: number; isInt: boolean; big?: bigint } {
  if (s === '') throw invalid('empty value');
  const bad = invalid(`Unable to parse value to a number: ${s}`);
  if (!/[.eE]/.test(s)) {
    if (/^[+-]?[0-9]+$/.test(s)) {
      if (s.replace(/^[+-]/, '').length <= 19) {
        const big = BigInt(s.replace(/^\+/, ''));
        if (big >= -(2n ** 63n) && big <= 2n ** 63n - 1n) {
          const v = Number(s);
          return Number.isSafeInteger(v) ? { value: v, isInt: true } : { value: v, isInt: true, big };
        }
      }
      if (/^\+?[0-9]+$/.test(s)) return { value: Number(s), isInt: false };
      throw bad;
    }
    if (/^[+-]?(NaN|Infinity)$/.test(s)) return { value: Number(s), isInt: false };
    throw bad;
  }
  if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?$/.test(s)) {
    const v = Number(s.replace(/[fFdD]$/, ''));
    if (Number.isFinite(v)) return { value: v, isInt: false };
  }
  throw bad;
}

function refDigits(s: string): number {
  if (s === '') throw invalid(`Invalid timestamp: ${s}`);
  const m = /[^0-9]/.exec(s);
  if (m !== null) throw invalid(`Invalid character '${s[m.index]}' in ${s}`);
  if (s.length > 16) throw invalid(`Invalid timestamp: ${s}`);
  return Number(s);
}

function refTimestamp(s: string): number {
  const dot = s.indexOf('.');
  if (dot < 0) return refDigits(s);
  const whole = refDigits(s.slice(0, dot));
  const frac = s.slice(dot + 1);
  if (!/^[0-9]{1,3}$/.test(frac)) throw invalid(`Invalid timestamp: ${s}`);
  const ms = whole * 1000 + Number(frac.padEnd(3, '0'));
  if (ms <= 4294967295) throw invalid(`Invalid timestamp: ${s}`);
  return ms;
}

/** The words after `put` (or an import line), as text. */
export function refPutLine(text: string): RefPoint | RefError {
  return run(() => {
    const words = text.split(/[ \t\r]+/).filter((w) => w !== '');
    if (words.length < 4) throw illegal(`not enough arguments (need least 4, got ${words.length})`);
    const [metric, ts, value, ...tagWords] = words as [string, string, string, ...string[]];
    const timestamp = refTimestamp(ts);
    const v = refValue(value);
    const tags: Array<[string, string]> = [];
    for (const w of tagWords) {
      const eq = w.indexOf('=');
      if (eq <= 0 || eq === w.length - 1) throw illegal(`invalid tag: ${w}`);
      const k = w.slice(0, eq);
      const val = w.slice(eq + 1);
      const dup = tags.find((t) => t[0] === k);
      if (dup === undefined) tags.push([k, val]);
      else if (dup[1] !== val) throw illegal(`duplicate tag: ${w}, tags={${tags.map(([a, b]) => `${a}=${b}`).join(', ')}}`);
    }
    return { metric, timestamp, ...v, tags, seriesText: [metric, ...tagWords].join(' ') };
  });
}

/** One JSON datapoint (as JSON.parse gives it). */
export function refJsonPoint(o: unknown): RefPoint | RefError {
  return run(() => {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) throw illegal('Datapoint must be an object');
    const d = o as Record<string, unknown>;
    if (typeof d.metric !== 'string' || d.metric === '') throw illegal('Metric name was empty');
    const t = d.timestamp;
    const n = typeof t === 'number' ? t : typeof t === 'string' && /^[0-9]+$/.test(t) ? Number(t) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) throw illegal('Invalid timestamp');
    const val = d.value;
    let v: { value: number; isInt: boolean; big?: bigint };
    if (typeof val === 'number') v = { value: val, isInt: Number.isSafeInteger(val) };
    else if (typeof val === 'string') v = refValue(val.trim());
    else if (val === undefined || val === null) throw illegal('Empty value');
    else throw invalid('Unable to parse value to a number');
    const tagsObj = d.tags;
    if (tagsObj === null || typeof tagsObj !== 'object' || Array.isArray(tagsObj)) throw illegal('Missing tags');
    const tags: Array<[string, string]> = [];
    for (const k of Object.keys(tagsObj)) {
      const tv = (tagsObj as Record<string, unknown>)[k];
      if (typeof tv !== 'string' && typeof tv !== 'number') throw illegal(`Invalid tag value for ${k}`);
      tags.push([k, String(tv)]);
    }
    if (tags.length === 0) throw illegal('Missing tags');
    return { metric: d.metric, timestamp: n, ...v, tags, seriesText: [d.metric, ...tags.map(([a, b]) => `${a}=${b}`)].join(' ') };
  });
}

/** A JSON body: its datapoints, or the body's error message. */
export function refJsonBody(text: string): RefPoint[] | RefError[] | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'Unable to parse the given JSON';
  }
  if (body === null) return 'Missing request content';
  if (typeof body !== 'object') return 'The JSON must start as an object or an array';
  return (Array.isArray(body) ? body : [body]).map(refJsonPoint) as RefPoint[] | RefError[];
}
