/**
 * Downsample specs of /api/query (OpenTSDB DownsamplingSpecification(String), FillPolicy,
 * and TSQuery's useCalendar/timezone):
 * `<n><unit>[c]-<fn>[-<fill>]`, split on `-` into 2 or 3 parts (Java split: a trailing
 * `-` is ignored). A first part containing `all` (`0all`, `all`) means one bucket per
 * series; a trailing `c` means calendar alignment; anything else is a duration (time.ts).
 * The function is an aggregator name (case-sensitive), never `none`; the fill policy is
 * matched case-insensitively. The top-level `useCalendar` makes every spec calendar-aligned
 * and the top-level `timezone` (default UTC) is the zone of calendar buckets.
 */
import { TsdbError } from '../errors.js';
import type { DurationUnit } from './time.js';
import { parseDuration, splitDuration } from './time.js';
import { checkTimezone } from './tz.js';
import { javaSplit } from './tag-filter.js';

export type FillPolicy = 'none' | 'nan' | 'null' | 'zero';

export interface DownsampleSpec {
  /** Bucket width; 0 with `all`. For calendar specs the nominal width (1n = 30 days). */
  readonly intervalMs: number;
  /** One bucket per series over [query start, query end), timestamped at the start. */
  readonly all: boolean;
  /** The downsampling aggregator, e.g. `avg`. */
  readonly fn: string;
  readonly fill: FillPolicy;
  /** Buckets follow the calendar of `timezone` (DateTime#previousInterval) instead of epoch multiples. */
  readonly calendar: boolean;
  /** The interval's unit and count (`1dc` → 'd', 1); unset with `all`. */
  readonly unit?: DurationUnit;
  readonly count?: number;
  /** IANA zone of calendar buckets; unset means UTC. Only set on calendar specs. */
  readonly timezone?: string;
  /** The spec as given (echoed by showQuery). */
  readonly text: string;
}

export interface DownsampleOptions {
  readonly aggregators: ReadonlySet<string>;
  /** TSQuery useCalendar: every spec but `all` becomes calendar-aligned. */
  readonly useCalendar?: boolean;
  /** TSQuery timezone for calendar buckets. */
  readonly timezone?: string | undefined;
}

const FILL_POLICIES = ['none', 'zero', 'nan', 'null', 'scalar'] as const;

function illegal(message: string): TsdbError {
  return new TsdbError('TSDB_ILLEGAL_ARGUMENT', message);
}

/** Specs parsed before, per aggregator set, by text, calendar flag and zone (specs are immutable). */
const parsed = new WeakMap<ReadonlySet<string>, Map<string, DownsampleSpec>>();
/** Distinct specs kept per aggregator set; past it the set starts over. */
const MAX_PARSED = 256;

/**
 * Parses one downsample spec; throws TSDB_ILLEGAL_ARGUMENT with OpenTSDB's messages. A
 * dashboard sends the same few specs with every query: those are parsed once.
 */
export function parseDownsample(text: string, opts: DownsampleOptions): DownsampleSpec {
  let byKey = parsed.get(opts.aggregators);
  if (byKey === undefined) parsed.set(opts.aggregators, (byKey = new Map()));
  const key = `${opts.useCalendar === true ? 'c' : '-'}${opts.timezone ?? ''}\u0000${text}`;
  let spec = byKey.get(key);
  if (spec === undefined) {
    spec = parseSpec(text, opts);
    if (byKey.size >= MAX_PARSED) byKey.clear();
    byKey.set(key, spec);
  }
  return spec;
}

function parseSpec(text: string, opts: DownsampleOptions): DownsampleSpec {
  const parts = javaSplit(text, '-');
  if (parts.length < 2) {
    throw illegal(`Invalid downsampling specifier '${text}': must provide at least interval and function`);
  }
  if (parts.length > 3) {
    throw illegal(`Invalid downsampling specifier '${text}': must consist of interval, function, and optional fill policy`);
  }
  const [first, fn, fillText] = parts as [string, string, string?];
  const all = first.includes('all');
  let calendar = false;
  let interval = first;
  if (!all && first.endsWith('c')) {
    calendar = true;
    interval = first.slice(0, -1);
  }
  const intervalMs = all ? 0 : parseDuration(interval);
  if (!opts.aggregators.has(fn)) throw illegal(`No such downsampling function: ${fn}`);
  if (fn === 'none') throw illegal('cannot use the NONE aggregator for downsampling');
  let fill: FillPolicy = 'none';
  if (fillText !== undefined) {
    const f = FILL_POLICIES.find((p) => p === fillText.toLowerCase());
    if (f === undefined) throw illegal(`Unrecognized fill policy: ${fillText}`);
    if (f === 'scalar') throw illegal('The scalar fill policy is only supported by /api/query/exp');
    fill = f;
  }
  if (opts.useCalendar === true && !all) calendar = true;
  const split = all ? undefined : splitDuration(interval);
  if (calendar && split === undefined) throw illegal(`Unrecognized unit type: ${interval.replace(/^[0-9]+/, '')}`);
  let timezone: string | undefined;
  if (calendar && opts.timezone !== undefined && opts.timezone !== '') {
    checkTimezone(opts.timezone);
    timezone = opts.timezone;
  }
  return {
    intervalMs, all, fn, fill, calendar,
    ...(split === undefined ? {} : { unit: split.unit, count: split.count }),
    ...(timezone === undefined ? {} : { timezone }),
    text,
  };
}
