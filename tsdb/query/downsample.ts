/**
 * Per-series downsampling (src/core/Downsampler.java, FillingDownsampler.java,
 * utils/DateTime#previousInterval). Buckets are [start, start+interval);
 * the bucket's value is the function's runDouble over its points; outputs are doubles.
 *
 * - fixed: bucket = ts − ts % interval (UTC epoch aligned);
 * - calendar: the grid starts at previousInterval(first point) in the request timezone
 *   and steps by N units (CalendarGrid below);
 * - `all`: one value over query_start <= ts < query_end, stamped query_start;
 * - fill nan/null/zero: every bucket from align(scanStart) to align(scanEnd) (exclusive;
 *   calendar: previousInterval of both, at least one bucket), NaN (nan, null) or 0 where
 *   a bucket has no points; data buckets off that grid are dropped.
 * As the AggregationIterator seeks every downsampler to the scan start, points before the
 * first bucket boundary at or after the scan start are ignored.
 */
import { TsdbError } from '../errors.js';
import type { Aggregator } from './aggregators.js';
import { allocPoints, lowerBound, type Points } from './series.js';

export interface DownsampleSpec {
  /** Fixed interval in ms (calendar specs still use it for the scan bounds). */
  readonly intervalMs: number;
  readonly all: boolean;
  readonly fn: string;
  readonly fill: 'none' | 'nan' | 'null' | 'zero';
  readonly calendar: boolean;
  /** ms, s, m, h, d, w, n, y — required when calendar. */
  readonly unit?: string;
  readonly count?: number;
  readonly timezone?: string;
}

export interface DownsampleWindow {
  readonly scanStartMs: number;
  readonly scanEndMs: number;
  readonly queryStartMs: number;
  readonly queryEndMs: number;
}

/** Most buckets one filled (nan/null/zero) downsample may emit per series: a year at 30 s. */
export const MAX_FILLED_BUCKETS = 1_051_200;

/** Downsamples one series. `cal` shares calendar steps across the series of a group. */
export function downsample(p: Points, ds: DownsampleSpec, fn: Aggregator, w: DownsampleWindow, cal?: CalendarGrid): Points {
  const { ts, values } = p;
  const n = p.count;
  if (ds.all) {
    const a = lowerBound(ts, n, Math.max(w.queryStartMs, w.scanStartMs));
    const b = Math.max(a, lowerBound(ts, n, w.queryEndMs));
    const out = allocPoints(1);
    if (b > a) {
      out.ts[0] = w.queryStartMs;
      out.values[0] = fn.runDouble(values, a, b);
      out.count = 1;
    }
    return out;
  }
  const grid = ds.calendar ? (cal ?? new CalendarGrid(ds)) : undefined;
  const iv = ds.intervalMs;
  if (grid === undefined && !(iv > 0)) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid downsample interval: ${iv}`);
  // Seek: to the first bucket boundary at or after the scan start.
  let seek: number;
  if (grid !== undefined) {
    const c = grid.previous(w.scanStartMs);
    seek = w.scanStartMs > c ? grid.next(c) : c;
  } else {
    const t = w.scanStartMs + iv - 1;
    seek = t - (t % iv);
  }
  let i = lowerBound(ts, n, seek);
  // FillingDownsampler's expected buckets (the plain Downsampler emits data buckets only).
  const filling = ds.fill !== 'none';
  let expect = 0;
  let expectEnd = 0;
  if (filling && grid !== undefined) {
    expect = grid.previous(w.scanStartMs);
    expectEnd = grid.previous(w.scanEndMs);
    if (expectEnd === expect) expectEnd = grid.next(expect);
  } else if (filling) {
    expect = w.scanStartMs - (w.scanStartMs % iv);
    expectEnd = w.scanEndMs - (w.scanEndMs % iv);
  }
  const fillValue = ds.fill === 'zero' ? 0 : NaN;
  const step = grid === undefined ? iv : grid.minStepMs;
  // A fill policy emits every bucket of the range, data or not: 50 years at 5m would be
  // 5 M points per series, allocated up front. Refuse (413) instead of running out of memory.
  if (filling && (expectEnd - expect) / step > MAX_FILLED_BUCKETS) {
    throw new TsdbError('TSDB_TOO_LARGE', `Query exceeded a limit: the fill policy would emit ${Math.ceil((expectEnd - expect) / step)} buckets per series, more than ${MAX_FILLED_BUCKETS}; narrow the time range or widen the downsample interval`);
  }
  // minStepMs bounds every step from below (slack for date-line jumps such as Samoa 2011).
  // Without fill: at most one point per input point and per bucket the data spans.
  const spanned = i < n ? Math.ceil((ts[n - 1]! - ts[i]!) / step) + (grid === undefined ? 1 : 8) : 1;
  const out = allocPoints(filling ? Math.max(1, Math.ceil((expectEnd - expect) / step) + (grid === undefined ? 1 : 8)) : Math.max(1, Math.min(n - i, spanned)));
  let k = 0;
  let have = false; // the data bucket [bStart, bEnd) of points [i, j) is known
  let bStart = 0;
  let bEnd = -Infinity;
  let j = i;
  while (filling ? expect < expectEnd : i < n) {
    if (!have && i < n) {
      const t = ts[i]!;
      if (grid === undefined) {
        bStart = t - (t % iv);
        bEnd = bStart + iv;
      } else if (t >= bEnd) {
        bStart = bEnd === -Infinity ? grid.previous(t) : grid.advance(bEnd, t);
        bEnd = grid.next(bStart);
      }
      j = i + 1;
      while (j < n && ts[j]! < bEnd) j++;
      have = true;
    }
    if (!filling) {
      out.ts[k] = bStart;
      out.values[k++] = fn.runDouble(values, i, j);
      i = j;
      have = false;
      continue;
    }
    if (have && bStart < expect) {
      i = j; // data before the expected bucket is consumed and dropped
      have = false;
      continue;
    }
    out.ts[k] = expect;
    if (have && bStart === expect) {
      out.values[k++] = fn.runDouble(values, i, j);
      i = j;
      have = false;
    } else {
      out.values[k++] = fillValue;
    }
    expect = grid === undefined ? expect + iv : grid.next(expect);
  }
  out.count = k;
  return out;
}

// ---------------------------------------------------------------------------------------
// Calendar (DateTime#previousInterval and java.util.Calendar#add), through Intl.
//
// previousInterval resets the local time to an anchor that depends on the unit and on
// whether N divides the next larger unit (ms: 1000 % N → second, else minute; s: 60 % N →
// minute, else hour; m: 60 % N → hour, else day; h: 24 % N → day, else month; d: N = 1 →
// month, else year; w → the week's first day, Sunday as in a US-locale JVM, then 7-day
// steps whatever N; n, y → year), then steps by N units to the last boundary <= ts. Steps
// of h/m/s/ms add fixed milliseconds (Calendar#add for fields >= HOUR); days, weeks, months
// and years keep the wall-clock time. A wall time in a DST gap or overlap resolves with the
// standard offset, as GregorianCalendar#computeTime documents.

const DAY = 86_400_000;
const FIXED_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNITS: ReadonlySet<string> = new Set(['ms', 's', 'm', 'h', 'd', 'w', 'n', 'y']);

export class CalendarGrid {
  /** A lower bound of one step, for sizing. */
  readonly minStepMs: number;
  private readonly unit: string;
  private readonly n: number;
  private readonly zone: Zone;
  private readonly nextCache = new Map<number, number>();

  constructor(ds: DownsampleSpec) {
    const unit = ds.unit ?? '';
    const n = ds.count ?? 0;
    if (!UNITS.has(unit) || !Number.isInteger(n) || n < 1) {
      throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid calendar downsample interval: ${n}${unit}`);
    }
    this.unit = unit;
    this.n = n;
    this.zone = new Zone(ds.timezone ?? 'UTC');
    const fixed = FIXED_MS[unit];
    const days = unit === 'y' ? 365 : unit === 'n' ? 28 : unit === 'w' ? 7 : 1;
    this.minStepMs = fixed !== undefined ? fixed * n : days * n * DAY - 3_600_000;
  }

  /** The boundary after `c` (Downsampler: add(unit, N); weeks: add(DAY, 7·N)). */
  next(c: number): number {
    const fixed = FIXED_MS[this.unit];
    if (fixed !== undefined) return c + fixed * this.n;
    let r = this.nextCache.get(c);
    if (r === undefined) {
      r = this.add(c, this.unit === 'w' ? 7 * this.n : this.n, this.unit === 'w' ? 'd' : this.unit);
      this.nextCache.set(c, r);
    }
    return r;
  }

  /** The last boundary <= t of the grid through `from` (from <= t). */
  advance(from: number, t: number): number {
    const fixed = FIXED_MS[this.unit];
    if (fixed !== undefined) return from + Math.floor((t - from) / (fixed * this.n)) * fixed * this.n;
    let c = from;
    for (let nx = this.next(c); nx <= t; nx = this.next(c)) c = nx;
    return c;
  }

  /** DateTime#previousInterval(ts, N, unit, tz). */
  previous(ts: number): number {
    const z = this.zone;
    const wall = ts + z.offset(ts);
    const day = Math.floor(wall / DAY);
    const [y, mo] = civil(day);
    const n = this.n;
    let anchor: number; // a wall time
    let unit = this.unit;
    let step = n;
    switch (unit) {
      case 'ms': anchor = floorTo(wall, 1000 % n === 0 ? 1000 : 60_000); break;
      case 's': anchor = floorTo(wall, 60 % n === 0 ? 60_000 : 3_600_000); break;
      case 'm': anchor = 60 % n === 0 ? floorTo(wall, 3_600_000) : day * DAY; break;
      case 'h': anchor = (24 % n === 0 ? day : dayOf(y, mo, 1)) * DAY; break;
      case 'd': anchor = (n === 1 ? dayOf(y, mo, 1) : dayOf(y, 1, 1)) * DAY; break;
      case 'w': anchor = (day - (((day + 4) % 7) + 7) % 7) * DAY; unit = 'd'; step = 7; break;
      default: anchor = dayOf(y, 1, 1) * DAY;
    }
    const start = z.fromWall(anchor);
    if (start === ts) return start;
    if (start > ts) return this.add(start, -step, unit); // Calendar's loop never ran
    // Jump close (one step short, DST may shift instants), then step as Calendar does.
    const fixed = FIXED_MS[unit];
    let k: number;
    if (fixed !== undefined) k = Math.floor((ts - start) / (fixed * step));
    else if (unit === 'd') k = Math.floor((day - Math.floor(anchor / DAY)) / step);
    else k = unit === 'n' ? Math.floor((mo - 1) / step) : 0;
    k = Math.max(0, k - 1);
    let c = k === 0 ? start : this.add(start, k * step, unit);
    for (;;) {
      const nx = this.add(c, step, unit);
      if (nx > ts) return c;
      c = nx;
    }
  }

  /** Calendar#add(unit, amount). */
  private add(c: number, amount: number, unit: string): number {
    const fixed = FIXED_MS[unit];
    if (fixed !== undefined) return c + fixed * amount;
    const z = this.zone;
    const wall = c + z.offset(c);
    const day = Math.floor(wall / DAY);
    const tod = wall - day * DAY;
    if (unit === 'd') return z.fromWall((day + amount) * DAY + tod);
    const [y, mo, d] = civil(day);
    const months = y * 12 + (mo - 1) + (unit === 'n' ? amount : amount * 12);
    const ny = Math.floor(months / 12);
    const nm = months - ny * 12 + 1;
    const nd = Math.min(d, dayOf(ny, nm + 1, 1) - dayOf(ny, nm, 1));
    return z.fromWall(dayOf(ny, nm, nd) * DAY + tod);
  }
}

function floorTo(x: number, m: number): number {
  return Math.floor(x / m) * m;
}

/** Days since 1970-01-01 of a (proleptic Gregorian) date; month 1-12, day may overflow. */
function dayOf(y: number, m: number, d: number): number {
  return Date.UTC(y, m - 1, d) / DAY;
}

/** [year, month 1-12, day of month] of a day number. */
function civil(day: number): [number, number, number] {
  const dt = new Date(day * DAY);
  return [dt.getUTCFullYear(), dt.getUTCMonth() + 1, dt.getUTCDate()];
}

/** A time zone's UTC offsets, read through Intl (no tz database of our own). */
export class Zone {
  private readonly fmt: Intl.DateTimeFormat | undefined;

  constructor(tz: string) {
    if (tz === 'UTC' || tz === 'GMT' || tz === 'Etc/UTC') {
      this.fmt = undefined;
      return;
    }
    try {
      this.fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      });
    } catch {
      throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid timezone name: ${tz}`);
    }
  }

  /** Local minus UTC, in ms, at instant `ms`. */
  offset(ms: number): number {
    if (this.fmt === undefined) return 0;
    const f: Record<string, number> = {};
    for (const part of this.fmt.formatToParts(ms)) f[part.type] = Number(part.value);
    return Date.UTC(f['year']!, f['month']! - 1, f['day'], f['hour'], f['minute'], f['second']) - Math.floor(ms / 1000) * 1000;
  }

  /** The instant of a wall time; gaps and overlaps resolve with the standard (smaller) offset. */
  fromWall(wall: number): number {
    const oa = this.offset(wall - 2 * DAY);
    const ob = this.offset(wall + 2 * DAY);
    if (oa === ob) {
      const o = this.offset(wall - oa);
      return o === oa ? wall - oa : wall - Math.min(o, oa);
    }
    const va = this.offset(wall - oa) === oa;
    const vb = this.offset(wall - ob) === ob;
    if (va !== vb) return va ? wall - oa : wall - ob;
    return wall - Math.min(oa, ob);
  }
}
