/**
 * /api/query's JSON exactly as OpenTSDB's serializer writes it (HttpJsonSerializer
 * #formatQueryAsyncV1): an array of `{metric, tags, aggregateTags, [query], [tsuids],
 * [annotations], [globalAnnotations], dps, [stats]}`, `dps` an object `{"<ts>": v}` or,
 * with `arrays`, `[[ts, v], …]`; integers printed as integers, doubles as Java prints
 * them (2.0, 1.0E7), NaN as the string "NaN" (or null under the null fill policy).
 * Built as one string, without an intermediate object per point.
 */

/** The points of one output series: ms timestamps and values, with per-point kinds. */
export interface OutputPoints {
  readonly count: number;
  readonly ts: Float64Array;
  readonly values: Float64Array;
  /** 1 where the value is an integer (printed without a fraction). */
  readonly isInt: Uint8Array;
  /** When set, NaN values print as null (the `null` fill policy) instead of "NaN". */
  readonly nanAsNull?: boolean;
}

export interface OutputSeries {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly aggregateTags: readonly string[];
  readonly points: OutputPoints;
  /** showQuery: the sub-query echo, with `index`. */
  readonly query?: unknown;
  readonly tsuids?: readonly string[];
  readonly annotations?: readonly unknown[];
  readonly globalAnnotations?: readonly unknown[];
  readonly stats?: unknown;
}

export interface FormatOptions {
  readonly arrays: boolean;
  readonly msResolution: boolean;
}

export function formatQueryResults(series: readonly OutputSeries[], opts: FormatOptions, summary?: unknown): string {
  const parts: string[] = [];
  for (const s of series) parts.push(formatSeries(s, opts));
  if (summary !== undefined) parts.push(JSON.stringify({ statsSummary: summary }));
  return `[${parts.join(',')}]`;
}

function formatSeries(s: OutputSeries, opts: FormatOptions): string {
  let out = `{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(s.tags)},"aggregateTags":${JSON.stringify(s.aggregateTags)}`;
  if (s.query !== undefined) out += `,"query":${JSON.stringify(s.query)}`;
  if (s.tsuids !== undefined) out += `,"tsuids":${JSON.stringify(s.tsuids)}`;
  if (s.annotations !== undefined && s.annotations.length > 0) out += `,"annotations":${JSON.stringify(s.annotations)}`;
  if (s.globalAnnotations !== undefined && s.globalAnnotations.length > 0) out += `,"globalAnnotations":${JSON.stringify(s.globalAnnotations)}`;
  out += `,"dps":${formatDps(s.points, opts)}`;
  if (s.stats !== undefined) out += `,"stats":${JSON.stringify(s.stats)}`;
  return `${out}}`;
}

/** `dps` as an object (keys in time order) or as [[ts, v], …] pairs. */
export function formatDps(p: OutputPoints, opts: FormatOptions): string {
  const chunks: string[] = [];
  let buf = '';
  for (let i = 0; i < p.count; i++) {
    const t = opts.msResolution ? p.ts[i]! : Math.floor(p.ts[i]! / 1000);
    const v = formatValue(p.values[i]!, p.isInt[i] === 1, p.nanAsNull === true);
    buf += opts.arrays ? `${i === 0 ? '' : ','}[${t},${v}]` : `${i === 0 ? '' : ','}"${t}":${v}`;
    if (buf.length > 65536) {
      chunks.push(buf);
      buf = '';
    }
  }
  chunks.push(buf);
  const body = chunks.join('');
  return opts.arrays ? `[${body}]` : `{${body}}`;
}

/** One value as Jackson writes OpenTSDB's longs and doubles. */
export function formatValue(v: number, isInt: boolean, nanAsNull: boolean): string {
  if (Number.isNaN(v)) return nanAsNull ? 'null' : '"NaN"';
  if (isInt && Number.isSafeInteger(v)) return String(v);
  if (!Number.isFinite(v)) return v > 0 ? '"Infinity"' : '"-Infinity"';
  return javaDouble(v);
}

/** A double as Java's Double.toString prints common values: 42.0, 0.5, 1.0E-5. */
export function javaDouble(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e7 || a < 1e-3)) {
    const [m, e] = v.toExponential().split('e');
    return `${m!.includes('.') ? m : `${m}.0`}E${Number(e)}`;
  }
  const s = String(v);
  return s.includes('.') || s.includes('e') ? s : `${s}.0`;
}
