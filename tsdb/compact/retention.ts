/**
 * Retention (tsdb/SCHEMA.md "Retention"): `horae.retention` keeps every metric's points for
 * a duration (empty: forever); `horae.retention.metrics` overrides it per metric, by exact
 * name or by name prefix (`sys.cpu.*`), e.g. `sys.cpu.*=7d, sys.mem.free=90d, audit=forever`.
 * The longest matching prefix wins; an exact name wins over any prefix.
 *
 * A row is expired once its whole hour is older than its metric's retention. The rules are
 * resolved to metric UIDs (`RetentionRules`, plain data handed to the row transform on the
 * job worker) when the layer opens and again whenever a metric is created.
 */
import { toHex } from '../../core/api/bytes.js';
import { TsdbError } from '../errors.js';

/** Retention resolved for the row transform (structured-clone safe). */
export interface RetentionRules {
  /** The default retention in ms; undefined: forever. */
  readonly defaultMs?: number;
  /** Metric UID (hex) → retention ms, 0 = forever; metrics not listed take the default. */
  readonly byMetric: ReadonlyArray<readonly [string, number]>;
  /** The longest retention any row has, undefined when some are kept forever (files older are dropped whole). */
  readonly longestMs?: number;
}

export interface RetentionRule {
  readonly metric: string;
  readonly prefix: boolean;
  /** ms; 0 = forever. */
  readonly ms: number;
}

export interface RetentionConfig {
  readonly defaultMs: number | undefined;
  readonly rules: readonly RetentionRule[];
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** `30d`, `12h`, `90m`, `3600s`, `2w`, `1y` (365 days) → ms; `forever` or empty → 0. */
export function parseDuration(text: string, what: string): number {
  const t = text.trim();
  if (t === '' || t === 'forever' || t === '0') return 0;
  const m = /^(\d+)(ms|s|m|h|d|w|y)$/.exec(t);
  if (m === null) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `${what}: invalid duration ${JSON.stringify(text)}: expected a number and a unit (ms, s, m, h, d, w, y), or forever`);
  const ms = Number(m[1]) * UNITS[m[2]!]!;
  if (!Number.isSafeInteger(ms) || ms < 3_600_000) {
    throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `${what}: duration ${JSON.stringify(text)} must be at least 1h (rows span an hour)`);
  }
  return ms;
}

/** Parses `horae.retention` and `horae.retention.metrics`. */
export function parseRetention(global: string, metrics: string): RetentionConfig {
  const defaultMs = parseDuration(global, 'horae.retention') || undefined;
  const rules: RetentionRule[] = [];
  for (const part of metrics.split(',')) {
    const p = part.trim();
    if (p === '') continue;
    const eq = p.lastIndexOf('=');
    const name = eq < 0 ? '' : p.slice(0, eq).trim();
    if (eq < 0 || name === '' || name === '*') {
      throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `horae.retention.metrics: ${JSON.stringify(p)} is not metric=duration or prefix*=duration`);
    }
    const prefix = name.endsWith('*');
    const metric = prefix ? name.slice(0, -1) : name;
    if (metric.includes('*')) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `horae.retention.metrics: ${JSON.stringify(name)}: only a trailing * is allowed`);
    rules.push({ metric, prefix, ms: parseDuration(p.slice(eq + 1), `horae.retention.metrics ${name}`) });
  }
  return { defaultMs, rules };
}

/** The longest retention of any row under `c`, undefined when some rows are kept forever. */
export function longestRetention(c: RetentionConfig): number | undefined {
  if (c.defaultMs === undefined) return undefined;
  let longest = c.defaultMs;
  for (const r of c.rules) {
    if (r.ms === 0) return undefined;
    if (r.ms > longest) longest = r.ms;
  }
  return longest;
}

/** The rule for metric `name`: exact first, then the longest matching prefix. */
export function ruleFor(c: RetentionConfig, name: string): RetentionRule | undefined {
  let best: RetentionRule | undefined;
  for (const r of c.rules) {
    if (!r.prefix) {
      if (r.metric === name) return r;
    } else if (name.startsWith(r.metric) && (best === undefined || r.metric.length > best.metric.length)) {
      best = r;
    }
  }
  return best;
}

/** The retention (ms) of metric `name` under `c`, undefined: forever. */
export function retentionOfName(c: RetentionConfig, name: string): number | undefined {
  const rule = ruleFor(c, name);
  if (rule === undefined) return c.defaultMs;
  return rule.ms === 0 ? undefined : rule.ms;
}

/**
 * Resolves the rules against the metrics that exist: `idOf` (exact names) and
 * `namesWithPrefix` list them. Metrics created later take the default until the next call.
 */
export async function resolveRetention(
  c: RetentionConfig,
  idOf: (name: string) => Promise<Uint8Array | undefined>,
  namesWithPrefix: (prefix: string) => Promise<string[]>,
): Promise<RetentionRules> {
  const byMetric = new Map<string, number>();
  const names = new Set<string>();
  for (const r of c.rules) {
    if (r.prefix) for (const n of await namesWithPrefix(r.metric)) names.add(n);
    else names.add(r.metric);
  }
  for (const n of names) {
    const rule = ruleFor(c, n);
    const id = await idOf(n);
    if (rule === undefined || id === undefined) continue;
    byMetric.set(toHex(id), rule.ms);
  }
  const longestMs = longestRetention(c);
  return { ...(c.defaultMs === undefined ? {} : { defaultMs: c.defaultMs }), byMetric: [...byMetric], ...(longestMs === undefined ? {} : { longestMs }) };
}

const lookups = new WeakMap<RetentionRules, Map<string, number>>();

/** The retention (ms) of the metric with this UID, undefined: forever. */
export function retentionOf(r: RetentionRules, metricUid: Uint8Array): number | undefined {
  if (r.byMetric.length === 0) return r.defaultMs;
  let m = lookups.get(r);
  if (m === undefined) lookups.set(r, (m = new Map(r.byMetric)));
  const ms = m.get(toHex(metricUid));
  if (ms === undefined) return r.defaultMs;
  return ms === 0 ? undefined : ms;
}
