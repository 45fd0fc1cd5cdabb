/**
 * The model test's clients and answer checks: HTTP (a fresh connection per request, so a
 * restarted server is never reached through a stale one), telnet (puts then `version`: the
 * reply acknowledges them), a JSON reader that keeps numbers as their text (is `2.0` a
 * double, is `2` an integer) and object entries in order, and the comparison of /api/query
 * answers with the reference's, which names the first difference.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import type { RefOut } from './opentsdb-reference.js';
import type { RefSeriesOut, Tags } from './reference-store.js';

export interface HttpReply {
  readonly status: number;
  readonly text: string;
}

export function http(port: number, method: string, path: string, body?: string | Uint8Array, contentType = 'application/json'): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { connection: 'close' };
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    }
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends put lines then `version` on a fresh telnet connection; resolves with the error lines
 * that came before the version reply (none: every put was acknowledged).
 */
export function telnetPuts(port: number, lines: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    let done = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      out += d;
      const at = out.indexOf('net.opentsdb');
      if (at >= 0 && !done) {
        done = true;
        sock.end('exit\n');
        resolve(out.slice(0, at).split('\n').filter((l) => l.trim() !== ''));
      }
    });
    sock.on('error', (err) => (done ? undefined : reject(err)));
    sock.on('close', () => {
      if (!done) resolve([`connection closed before the version reply: ${JSON.stringify(out.slice(0, 300))}`]);
    });
    sock.write(`${lines.join('\n')}\nversion\n`);
  });
}

/** A JSON value with numbers kept as `{ num: text }` and objects as ordered entry lists. */
export type Raw = null | boolean | string | { num: string } | Raw[] | { obj: Array<[string, Raw]> };

/** Parses JSON keeping number texts and object entry order (duplicate keys too). */
export function parseRaw(text: string): Raw {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const value = (): Raw => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: Array<[string, Raw]> = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { obj: entries };
      }
      for (;;) {
        ws();
        const k = value() as string;
        ws();
        if (text[i++] !== ':') throw new Error(`bad JSON at ${i}: ${text.slice(0, 200)}`);
        entries.push([k, value()]);
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === '}') return { obj: entries };
        else throw new Error(`bad JSON at ${i}: ${text.slice(0, 200)}`);
      }
    }
    if (c === '[') {
      i++;
      const out: Raw[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === ']') return out;
        else throw new Error(`bad JSON at ${i}: ${text.slice(0, 200)}`);
      }
    }
    if (c === '"') {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i)) as string;
    }
    for (const [word, v] of [['null', null], ['true', true], ['false', false]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 40));
    if (m === null) throw new Error(`bad JSON at ${i}: ${text.slice(0, 200)}`);
    i += m[0].length;
    return { num: m[0] };
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing JSON at ${i}: ${text.slice(0, 200)}`);
  return v;
}

function field(o: Raw, k: string): Raw | undefined {
  if (o === null || typeof o !== 'object' || !('obj' in o)) return undefined;
  return o.obj.find(([key]) => key === k)?.[1];
}

/** Plain JS of a Raw value (numbers as numbers). */
export function plain(o: Raw): unknown {
  if (o === null || typeof o !== 'object') return o;
  if (Array.isArray(o)) return o.map(plain);
  if ('num' in o) return Number(o.num);
  return Object.fromEntries(o.obj.map(([k, v]) => [k, plain(v)]));
}

interface GotPoint { key: string; value: Raw }

interface GotSeries { metric: string; tags: Tags; aggregateTags: string[]; dps: GotPoint[] }

function gotSeries(o: Raw): GotSeries {
  const dps = field(o, 'dps');
  const points: GotPoint[] = Array.isArray(dps)
    ? dps.map((p) => ({ key: ((p as Raw[])[0] as { num: string }).num, value: (p as Raw[])[1]! }))
    : (dps as { obj: Array<[string, Raw]> }).obj.map(([key, value]) => ({ key, value }));
  return {
    metric: field(o, 'metric') as string,
    tags: plain(field(o, 'tags') ?? null) as Tags,
    aggregateTags: [...(plain(field(o, 'aggregateTags') ?? null) as string[])].sort(),
    dps: points,
  };
}

const tagsKey = (tags: Tags, agg: readonly string[]): string => JSON.stringify([Object.keys(tags).sort().map((k) => [k, tags[k]]), [...agg].sort()]);

/** Why one answered point differs from the reference's, or undefined. */
function pointDiff(got: GotPoint, want: RefOut, ms: boolean, nanAsNull: boolean, loose: boolean): string | undefined {
  const key = String(ms ? want.t : Math.floor(want.t / 1000));
  if (got.key !== key) return `timestamp ${got.key}, want ${key}`;
  const v = got.value;
  const text = v !== null && typeof v === 'object' && 'num' in v ? v.num : undefined;
  if (want.int) {
    const long = want.big ?? BigInt(want.v);
    if (text !== undefined && /^-?\d+$/.test(text)) {
      const diff = BigInt(text) - long;
      return diff === 0n || (loose && (diff === 1n || diff === -1n)) ? undefined : `value ${text} at ${key}, want ${long}`;
    }
    return `value ${JSON.stringify(v)} at ${key}, want the integer ${long}`;
  }
  if (Number.isNaN(want.v)) {
    return (nanAsNull ? v === null : v === 'NaN') ? undefined : `value ${JSON.stringify(v)} at ${key}, want ${nanAsNull ? 'null' : '"NaN"'}`;
  }
  if (v === null || typeof v !== 'object' || !('num' in v) || !/[.eE]/.test(v.num)) return `value ${JSON.stringify(v)} at ${key}, want the double ${want.v}`;
  const n = Number(v.num);
  return Math.abs(n - want.v) <= 1e-9 * Math.max(1, Math.abs(want.v)) ? undefined : `value ${v.num} at ${key}, want ${want.v}`;
}

export interface CompareOptions {
  readonly msResolution: boolean;
  /** Fill policy null: NaN is written as null. */
  readonly nanAsNull: boolean;
  /** Long results of `dev` may differ by one (the order of the series differs). */
  readonly looseLongs: boolean;
}

/** The first difference between an /api/query answer and the reference's outputs, or undefined. */
export function compareQuery(text: string, want: readonly RefSeriesOut[], o: CompareOptions): string | undefined {
  const raw = parseRaw(text);
  if (!Array.isArray(raw)) return `not an array: ${text.slice(0, 300)}`;
  const got = raw.map(gotSeries);
  const byKey = new Map(got.map((g) => [tagsKey(g.tags, g.aggregateTags), g]));
  if (byKey.size !== got.length) return `two outputs with the same tags: ${got.map((g) => tagsKey(g.tags, g.aggregateTags)).join(' ')}`;
  const wantKeys = want.map((w) => tagsKey(w.tags, w.aggregateTags));
  const missing = wantKeys.filter((k) => !byKey.has(k));
  const extra = [...byKey.keys()].filter((k) => !wantKeys.includes(k));
  if (missing.length > 0 || extra.length > 0) {
    const dps = (k: string): number => want.find((w) => tagsKey(w.tags, w.aggregateTags) === k)?.dps.length ?? -1;
    return `outputs differ: missing ${missing.map((k) => `${k} (${dps(k)} points)`).join(' ') || '-'}; unexpected ${extra.map((k) => `${k} (${byKey.get(k)!.dps.length} points)`).join(' ') || '-'}`;
  }
  for (const w of want) {
    const g = byKey.get(tagsKey(w.tags, w.aggregateTags))!;
    const where = `output ${tagsKey(w.tags, w.aggregateTags)}`;
    if (g.metric !== w.metric) return `${where}: metric ${g.metric}, want ${w.metric}`;
    const n = Math.max(g.dps.length, w.dps.length);
    for (let i = 0; i < n; i++) {
      const gp = g.dps[i];
      const wp = w.dps[i];
      if (gp === undefined) return `${where}: ${g.dps.length} points, want ${w.dps.length}; first missing ${wp!.t} ${wp!.big ?? wp!.v}`;
      if (wp === undefined) return `${where}: ${g.dps.length} points, want ${w.dps.length}; first extra ${gp.key} ${JSON.stringify(gp.value)}`;
      const d = pointDiff(gp, wp, o.msResolution, o.nanAsNull, o.looseLongs);
      if (d !== undefined) return `${where}: point ${i} of ${n}: ${d}`;
    }
  }
  return undefined;
}
