/**
 * The uPlot adapter of a panel. The chart is created once per shape (series, axes, theme,
 * legend) and then only gets setData/setSize, as uPlot wants; a different shape rebuilds
 * it. Timestamps are epoch ms (`ms: 1`); the x scale is pinned to the queried range, so
 * panels line up and the cursor syncs across them (`cursor.sync`).
 *
 * Dragging across the plot does not zoom the chart itself: it reports the selected time
 * range (onZoom), the dashboard narrows its range and refetches every panel at the new
 * resolution. A double-click reports onZoomOut. The legend shows the values under the
 * cursor and toggles a series on click.
 */
import uPlot from 'uplot';
import type { AxisRange, Panel, ThemeName } from './dashboard-state.js';
import { formatAxisValue, formatLegendValue, formatTimeTicks, formatTimestamp } from './format.js';
import { chartPalette } from './theme.js';
import type { ChartSeries, PanelData } from './to-aligned.js';

export const CURSOR_SYNC_KEY = 'horae';

export interface ChartOptions {
  readonly theme: ThemeName;
  readonly height: number;
  readonly onZoom: (minMs: number, maxMs: number) => void;
  readonly onZoomOut: () => void;
}

export interface ChartView {
  readonly panel: Panel;
  readonly data: PanelData;
  readonly startMs: number;
  readonly endMs: number;
}

export class Chart {
  readonly #container: HTMLElement;
  readonly #opts: ChartOptions;
  #u: uPlot | undefined;
  #shape = '';
  #range: [number, number] = [0, 1];
  #drawStarted = 0;
  /** Milliseconds from the data's arrival (show's sinceMs) to the end of its first draw. */
  lastDrawMs = 0;
  /** Called after each draw that followed a show(). */
  onDrawn: ((ms: number) => void) | undefined;

  constructor(container: HTMLElement, opts: ChartOptions) {
    this.#container = container;
    this.#opts = opts;
  }

  /**
   * Draws `view`: setData on the existing chart when the shape is unchanged, else rebuilds.
   * `sinceMs` (performance.now() when the data arrived) starts the lastDrawMs clock.
   */
  show(view: ChartView, theme: ThemeName = this.#opts.theme, sinceMs = performance.now()): void {
    this.#range = [view.startMs, view.endMs];
    const shape = JSON.stringify([theme, view.panel.ylog, view.panel.y2log, view.panel.yrange, view.panel.y2range, view.panel.ylabel, view.panel.y2label, view.panel.nokey, view.data.series.map((s) => [s.label, s.axis])]);
    this.#drawStarted = sinceMs;
    const data = view.data.data as uPlot.AlignedData;
    if (this.#u !== undefined && shape === this.#shape) {
      this.#u.setData(data);
      return;
    }
    this.destroy();
    this.#shape = shape;
    this.#u = new uPlot(this.#options(view.panel, view.data.series, theme), data, this.#container);
  }

  /** Follows the container's width. */
  resize(): void {
    const u = this.#u;
    if (u === undefined) return;
    const w = this.#container.clientWidth;
    if (w > 0 && w !== u.width) u.setSize({ width: w, height: this.#opts.height });
  }

  /** The live uPlot instance (tests and devtools). */
  get uplot(): uPlot | undefined {
    return this.#u;
  }

  destroy(): void {
    this.#u?.destroy();
    this.#u = undefined;
    this.#shape = '';
  }

  #options(panel: Panel, series: readonly ChartSeries[], theme: ThemeName): uPlot.Options {
    const pal = chartPalette(theme);
    const hasY2 = series.some((s) => s.axis === 'y2');
    const axisStyle = { stroke: pal.axis, grid: { stroke: pal.grid, width: 1 }, ticks: { stroke: pal.grid, width: 1 } };
    const yAxis = (scale: 'y' | 'y2', label: string | undefined, side: 1 | 3): uPlot.Axis => ({
      ...axisStyle,
      scale,
      side,
      size: 60,
      ...(label === undefined ? {} : { label, labelSize: 20 }),
      ...(scale === 'y2' ? { grid: { show: false } } : {}),
      values: (_u, splits) => splits.map((v) => (v === null || v === undefined ? '' : formatAxisValue(v))),
    });
    const scales: uPlot.Scales = {
      x: { time: true, range: () => this.#range },
      y: yScale(panel.ylog, panel.yrange),
    };
    if (hasY2) scales['y2'] = yScale(panel.y2log, panel.y2range);
    const axes: uPlot.Axis[] = [
      { ...axisStyle, space: 80, values: (_u, splits, _ai, _space, incr) => formatTimeTicks(splits, incr) },
      yAxis('y', panel.ylabel, 3),
    ];
    if (hasY2) axes.push(yAxis('y2', panel.y2label, 1));
    return {
      width: Math.max(100, this.#container.clientWidth),
      height: this.#opts.height,
      ms: 1,
      pxAlign: 1,
      legend: { show: !panel.nokey, live: true },
      cursor: {
        sync: { key: CURSOR_SYNC_KEY },
        drag: { x: true, y: false, setScale: false },
        bind: {
          dblclick: () => () => {
            this.#opts.onZoomOut();
            return null;
          },
        },
      },
      select: { show: true, left: 0, top: 0, width: 0, height: 0 },
      scales,
      axes,
      series: [
        // Off the plot the legend shows each series' last value (Grafana's habit), not dashes.
        { label: 'Time', value: (_u, v, _si, idx) => (idx === null || idx === undefined ? 'last' : v === null || v === undefined ? '—' : formatTimestamp(v)) },
        ...series.map((s, i): uPlot.Series => ({
          label: s.label,
          scale: s.axis,
          stroke: pal.series[i % pal.series.length]!,
          width: 1.5,
          spanGaps: false,
          value: (u, v, si, idx) => formatLegendValue(idx === null || idx === undefined ? lastValue(u.data[si]) : v),
        })),
      ],
      hooks: {
        setSelect: [
          (u) => {
            const { left, width } = u.select;
            if (width < 3) return;
            const min = u.posToVal(left, 'x');
            const max = u.posToVal(left + width, 'x');
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            this.#opts.onZoom(min, max);
          },
        ],
        draw: [
          () => {
            if (this.#drawStarted === 0) return;
            this.lastDrawMs = performance.now() - this.#drawStarted;
            this.#drawStarted = 0;
            this.onDrawn?.(this.lastDrawMs);
          },
        ],
      },
    };
  }
}

/** The newest non-null value of a column (scans back from the end; gaps are short). */
export function lastValue(col: ArrayLike<number | null | undefined> | undefined): number | null {
  if (col === undefined) return null;
  for (let i = col.length - 1; i >= 0; i--) {
    const v = col[i];
    if (v !== null && v !== undefined) return v;
  }
  return null;
}

function yScale(log: boolean, range: AxisRange | undefined): uPlot.Scale {
  return {
    distr: log ? 3 : 1,
    ...(log ? { log: 10 } : {}),
    range: (_u, dmin, dmax) => {
      const hasData = dmin !== null && dmax !== null && Number.isFinite(dmin) && Number.isFinite(dmax);
      const auto = !hasData
        ? [log ? 1 : 0, log ? 10 : 1]
        : log
          ? uPlot.rangeLog(dmin > 0 ? dmin : 1, dmax > 0 ? dmax : 10, 10, true)
          : uPlot.rangeNum(dmin, dmax, 0.1, true);
      const lo = range?.min ?? auto[0] ?? 0;
      const hi = range?.max ?? auto[1] ?? 1;
      return [lo, hi > lo ? hi : lo + 1];
    },
  };
}

/**
 * Draws a throw-away chart of `points` synthetic points per series off screen, then removes
 * it. Called while the first queries are in flight: V8 compiles uPlot's path and axis code
 * on this data instead of on the user's first answer, which cuts the first paint of a big
 * panel several-fold (a cold 150k-point draw spends most of its time in the JIT).
 */
export function warmUpChart(theme: ThemeName, points = 40_000, seriesCount = 3): void {
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:-10000px;top:0;width:1000px;visibility:hidden';
  document.body.append(box);
  // NB: plain arrays of doubles (one with gaps), like JSON.parse gives: code optimised for
  // Float64Array elements would deoptimise on the real data instead of staying warm.
  const ts: number[] = [];
  const cols: (number | null)[][] = [];
  for (let i = 0; i < points; i++) ts.push(1_700_000_000_000.5 + i * 1000);
  for (let s = 0; s < seriesCount; s++) {
    const col: (number | null)[] = [];
    for (let i = 0; i < points; i++) col.push(s === seriesCount - 1 && i % 1000 === 999 ? null : Math.sin(i / (100 + s)) * 100 + s * 10.5);
    cols.push(col);
  }
  const series: ChartSeries[] = cols.map((_, s) => ({ label: `warm-up ${s}`, axis: 'y', queryIndex: 0, metric: 'warm-up', tags: {} }));
  const chart = new Chart(box, { theme, height: 200, onZoom: () => undefined, onZoomOut: () => undefined });
  const panel: Panel = { title: '', queries: [], ylog: false, y2log: false, nokey: false };
  chart.onDrawn = () => queueMicrotask(() => {
    chart.destroy();
    box.remove();
  });
  chart.show({ panel, data: { data: [ts, ...cols], series }, startMs: ts[0]!, endMs: ts[points - 1]! }, theme);
}
