/**
 * What the multi-server suite expects: every acknowledged point of every series (the last
 * acknowledged write of a timestamp wins), and the names a suggest lists. Points are kept
 * by (metric, tags) name, so renames move them; a name written again after its rename is
 * a new series.
 */

export type Tags = Readonly<Record<string, string>>;

export interface Point {
  /** Seconds. */
  readonly ts: number;
  readonly value: number;
  readonly isInt: boolean;
}

export interface ModelSeries {
  metric: string;
  tags: Record<string, string>;
  readonly points: Map<number, Point>;
}

/** The key of a series: metric and tags in key order. */
export function seriesKey(metric: string, tags: Tags): string {
  return `${metric}{${Object.keys(tags).sort().map((k) => `${k}=${tags[k]}`).join(',')}}`;
}

/** The text Horae prints for a value (an integer as such; a double as Java does, here always with a fraction). */
export function valueText(p: Point): string {
  return p.isInt ? String(p.value) : Number.isInteger(p.value) ? `${p.value}.0` : String(p.value);
}

export class Model {
  readonly series = new Map<string, ModelSeries>();
  readonly names = { metric: new Set<string>(), tagk: new Set<string>(), tagv: new Set<string>() };

  /** An acknowledged point. */
  put(metric: string, tags: Tags, p: Point): void {
    const key = seriesKey(metric, tags);
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = { metric, tags: { ...tags }, points: new Map() }));
    s.points.set(p.ts, p);
    this.names.metric.add(metric);
    for (const [k, v] of Object.entries(tags)) {
      this.names.tagk.add(k);
      this.names.tagv.add(v);
    }
  }

  /** A metric or tag value renamed (the UID keeps its series). */
  rename(kind: 'metric' | 'tagv', from: string, to: string): void {
    const moved: ModelSeries[] = [];
    for (const [key, s] of this.series) {
      if (kind === 'metric' ? s.metric === from : Object.values(s.tags).includes(from)) {
        this.series.delete(key);
        moved.push(s);
      }
    }
    for (const s of moved) {
      if (kind === 'metric') s.metric = to;
      else for (const k of Object.keys(s.tags)) if (s.tags[k] === from) s.tags[k] = to;
      this.series.set(seriesKey(s.metric, s.tags), s);
    }
    this.names[kind].delete(from);
    this.names[kind].add(to);
  }

  /** A delete query over [startSec, endSec] removes the whole hour rows it touches. */
  deleteHours(metric: string, tags: Tags, startSec: number, endSec: number): void {
    const s = this.series.get(seriesKey(metric, tags));
    if (s === undefined) return;
    const first = startSec - (startSec % 3600);
    const last = endSec - (endSec % 3600) + 3600;
    for (const ts of [...s.points.keys()]) if (ts >= first && ts < last) s.points.delete(ts);
  }

  metrics(): string[] {
    return [...new Set([...this.series.values()].map((s) => s.metric))].sort();
  }

  /** Series of a metric with at least one point. */
  seriesOf(metric: string): ModelSeries[] {
    return [...this.series.values()].filter((s) => s.metric === metric && s.points.size > 0);
  }

  /** Every series ever written (the series index keeps a series whose points were deleted). */
  indexedOf(metric: string): ModelSeries[] {
    return [...this.series.values()].filter((s) => s.metric === metric);
  }
}

/** The points of a series in time order. */
export function sortedPoints(s: ModelSeries): Point[] {
  return [...s.points.values()].sort((a, b) => a.ts - b.ts);
}
