/**
 * One sub-query group through OpenTSDB's arithmetic, in the order its code applies it
 * (TsdbQuery, SpanGroup, AggregationIterator):
 *
 *   per series: points of the hour-aligned scan window
 *               → downsample (Downsampler) → rate (RateSpan)
 *   across series: aggregate with interpolation (AggregationIterator, Aggregators)
 *   serializer: keep start <= ts <= end (HttpJsonSerializer)
 *
 * The aggregation runs over the scan window, so points outside [start, end] still feed
 * interpolation, the first rate and filled buckets. Aggregator `none` returns one output
 * per input series (no grouping). Filtering and grouping happen before (the caller
 * passes one group's series).
 */
import { TsdbError } from '../errors.js';
import { aggregate, type AggregateOptions } from './aggregate.js';
import { AGGREGATOR_NAMES, type Aggregator, getAggregator, isAggregator } from './aggregators.js';
import { CalendarGrid, downsample, type DownsampleSpec } from './downsample.js';
import { rate, type RateSpec } from './rate.js';
import { type OutSeries, type Points, type SeriesData, slicePoints } from './series.js';

export { AGGREGATOR_NAMES, isAggregator };
export type { DownsampleSpec, RateSpec };

export interface PipelineSpec {
  /** The query's start and end in ms (end inclusive, as OpenTSDB). */
  readonly startMs: number;
  readonly endMs: number;
  /** 'sum', 'zimsum', 'none', 'p95', 'ep99r7', … (case-sensitive). */
  readonly aggregator: string;
  readonly downsample?: DownsampleSpec;
  readonly rate?: RateSpec;
  /** The scan window [scanStartMs, scanEndMs); computed as TsdbQuery does when absent. */
  readonly scanStartMs?: number;
  readonly scanEndMs?: number;
}

export interface ScanWindow {
  readonly startMs: number;
  /** Exclusive. */
  readonly endMs: number;
}

/**
 * TsdbQuery#getScanStartTimeSeconds / #getScanEndTimeSeconds, in ms: the start
 * aligned down to the downsample interval then to the hour; the end as end_s + 1, then to
 * the next interval and up to the hour (or straight to the next hour without downsampling).
 * Calendar specs use their fixed-length interval here, as OpenTSDB does.
 */
export function scanWindow(startMs: number, endMs: number, ds?: DownsampleSpec): ScanWindow {
  const iv = ds !== undefined && !ds.all ? ds.intervalMs : 0;
  let start = Math.floor(startMs / 1000);
  if (iv > 0) start -= Math.floor(((1000 * start) % iv) / 1000);
  start -= start % 3600;
  if (start < 0) start = 0;
  let end = Math.floor(endMs / 1000) + 1;
  if (iv > 0) {
    end += Math.floor((iv - ((1000 * end) % iv)) / 1000);
    if (end % 3600 !== 0) end += 3600 - (end % 3600);
  } else {
    end += 3600 - (end % 3600);
  }
  return { startMs: start * 1000, endMs: end * 1000 };
}

/**
 * The per-series half of the pipeline, for one sub-query: the points of the scan window →
 * downsample → rate. It depends on the series' own points only, so it may run anywhere (a
 * decode worker prepares the series of the salt buckets it decoded). Validates the spec.
 */
export class SeriesPreparer {
  private readonly spec: PipelineSpec;
  private readonly win: ScanWindow;
  private readonly fn: Aggregator | undefined;
  private readonly cal: CalendarGrid | undefined;
  private readonly dsWindow: { scanStartMs: number; scanEndMs: number; queryStartMs: number; queryEndMs: number };

  constructor(spec: PipelineSpec) {
    getAggregator(spec.aggregator);
    if (!(spec.endMs >= spec.startMs)) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'End time must be greater than or equal to the start time');
    const ds = spec.downsample;
    const fn = ds === undefined ? undefined : getAggregator(ds.fn);
    if (fn?.name === 'none') throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'cannot use the NONE aggregator for downsampling');
    const computed = scanWindow(spec.startMs, spec.endMs, ds);
    this.spec = spec;
    this.fn = fn;
    this.win = { startMs: spec.scanStartMs ?? computed.startMs, endMs: spec.scanEndMs ?? computed.endMs };
    this.cal = ds !== undefined && ds.calendar && !ds.all ? new CalendarGrid(ds) : undefined;
    this.dsWindow = { scanStartMs: this.win.startMs, scanEndMs: this.win.endMs, queryStartMs: spec.startMs, queryEndMs: spec.endMs };
  }

  prepare(s: Points): Points {
    const ds = this.spec.downsample;
    let p: Points = slicePoints(s, this.win.startMs, this.win.endMs);
    if (ds !== undefined && this.fn !== undefined) p = downsample(p, ds, this.fn, this.dsWindow, this.cal);
    if (this.spec.rate !== undefined) p = rate(p, this.spec.rate);
    return p;
  }

  /**
   * prepare() for a series whose points were downsampled as they were read (scanner.ts
   * ScanRequest.downsample, which takes only the scan window's points): the rate, if any.
   */
  prepareDownsampled(s: Points): Points {
    return this.spec.rate !== undefined ? rate(s, this.spec.rate) : s;
  }

  /** The cross-series half: aggregate prepared series with interpolation, then trim. */
  combine(prepared: readonly Points[]): OutSeries[] {
    if (prepared.length === 0) return [];
    const agg = getAggregator(this.spec.aggregator);
    const opts: AggregateOptions = { rate: this.spec.rate !== undefined, endMs: this.win.endMs, emitFrom: this.spec.startMs, emitTo: this.spec.endMs };
    const nanAsNull = this.spec.downsample?.fill === 'null';
    const finish = (o: OutSeries): OutSeries => {
      if (nanAsNull) o.nanAsNull = true;
      return o;
    };
    if (agg.name === 'none') return prepared.map((p) => finish(aggregate([p], agg, opts)));
    return [finish(aggregate(prepared, agg, opts))];
  }
}

/**
 * Runs one group of series (already filtered and grouped) through downsample → rate →
 * aggregate → trim, as OpenTSDB's code orders it. 'none' returns one output per input
 * series; any other aggregator one output (possibly without points), none for no series.
 */
export function runGroup(series: readonly SeriesData[], spec: PipelineSpec): OutSeries[] {
  const preparer = new SeriesPreparer(spec);
  if (series.length === 0) return [];
  return preparer.combine(series.map((s) => preparer.prepare(s)));
}
