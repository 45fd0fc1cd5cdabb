/**
 * The two rate charts of the operator page (uPlot): ingest (points/s, cells written/s) and
 * queries (queries/s; rows read/s on a second axis, as it runs orders of magnitude
 * higher), over the last 15 minutes whatever the history holds (a fresh server has a few
 * samples at the right edge). Each is created once; refreshes call setData, resizes setSize.
 */
import uPlot from 'uplot';
import { formatAxisValue } from '../../lib/format.js';
import { historyToAligned } from '../../lib/ops-history.js';
import type { ThemeName } from '../../lib/dashboard-state.js';
import type { OpsOverview, OpsRateName } from '../../lib/ops-overview.js';
import { chartPalette } from '../../lib/theme.js';

interface ChartSpec {
  readonly theme: ThemeName;
  readonly target: HTMLElement;
  readonly series: readonly { readonly name: OpsRateName; readonly label: string; readonly stroke: string; readonly scale: string }[];
}

const HEIGHT = 180;
/** The span the charts show: the server keeps 15 minutes of 5 s samples. */
const HISTORY_SPAN_MS = 15 * 60_000;

function widthOf(target: HTMLElement): number {
  return Math.max(240, Math.floor(target.getBoundingClientRect().width));
}

export class RateChart {
  private readonly spec: ChartSpec;
  private plot: uPlot | undefined;

  constructor(spec: ChartSpec) {
    this.spec = spec;
  }

  /** The x range in seconds: the history's full span (capacity × interval) up to now. */
  private xRange: [number, number] = [0, 1];

  update(history: OpsOverview['history'], nowMs: number): void {
    const data = historyToAligned(history, this.spec.series.map((s) => s.name)) as uPlot.AlignedData;
    const end = Math.max(nowMs, history.timesMs.at(-1) ?? nowMs) / 1000;
    this.xRange = [end - (HISTORY_SPAN_MS / 1000), end];
    if (this.plot !== undefined) {
      this.plot.setData(data);
      return;
    }
    const scales = [...new Set(this.spec.series.map((s) => s.scale))];
    const axisValues = (_u: uPlot, vals: number[]): string[] => vals.map((v) => `${formatAxisValue(v)}/s`);
    const pal = chartPalette(this.spec.theme);
    const axisStyle = { stroke: pal.axis, grid: { stroke: pal.grid, width: 1 }, ticks: { stroke: pal.grid, width: 1 } };
    this.plot = new uPlot(
      {
        width: widthOf(this.spec.target),
        height: HEIGHT,
        scales: Object.fromEntries([['x', { time: true, range: (): uPlot.Range.MinMax => this.xRange }], ...scales.map((s) => [s, { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1] }])]),
        series: [{}, ...this.spec.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 1.5, scale: s.scale, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${formatAxisValue(v)}/s`) }))],
        axes: [axisStyle, ...scales.map((s, i) => ({ ...axisStyle, scale: s, side: i === 0 ? 3 : 1, size: 64, values: axisValues, grid: { ...axisStyle.grid, show: i === 0 } }))],
        legend: { live: true },
      },
      data,
      this.spec.target,
    );
  }

  resize(): void {
    this.plot?.setSize({ width: widthOf(this.spec.target), height: HEIGHT });
  }
}
