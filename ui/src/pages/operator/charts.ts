/**
 * The two rate charts of the operator page (uPlot): ingest (points/s, cells written/s) and
 * queries (queries/s; rows read/s on a second axis, as it runs orders of magnitude
 * higher). Each is created once; refreshes call setData, resizes setSize.
 */
import uPlot from 'uplot';
import { formatAxisValue } from '../../lib/format.js';
import { historyToAligned } from '../../lib/ops-history.js';
import type { OpsOverview, OpsRateName } from '../../lib/ops-overview.js';

interface ChartSpec {
  readonly target: HTMLElement;
  readonly series: readonly { readonly name: OpsRateName; readonly label: string; readonly stroke: string; readonly scale: string }[];
}

const HEIGHT = 180;

function widthOf(target: HTMLElement): number {
  return Math.max(240, Math.floor(target.getBoundingClientRect().width));
}

export class RateChart {
  private readonly spec: ChartSpec;
  private plot: uPlot | undefined;

  constructor(spec: ChartSpec) {
    this.spec = spec;
  }

  update(history: OpsOverview['history']): void {
    const data = historyToAligned(history, this.spec.series.map((s) => s.name)) as uPlot.AlignedData;
    if (this.plot !== undefined) {
      this.plot.setData(data);
      return;
    }
    const scales = [...new Set(this.spec.series.map((s) => s.scale))];
    const axisValues = (_u: uPlot, vals: number[]): string[] => vals.map((v) => `${formatAxisValue(v)}/s`);
    this.plot = new uPlot(
      {
        width: widthOf(this.spec.target),
        height: HEIGHT,
        scales: Object.fromEntries([['x', { time: true }], ...scales.map((s) => [s, { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1] }])]),
        series: [{}, ...this.spec.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 1.5, scale: s.scale, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${formatAxisValue(v)}/s`) }))],
        axes: [{}, ...scales.map((s, i) => ({ scale: s, side: i === 0 ? 3 : 1, size: 64, values: axisValues, grid: { show: i === 0 } }))],
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
