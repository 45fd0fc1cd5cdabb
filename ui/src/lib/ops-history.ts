/**
 * The server's rate history (overview `history`, one sample per `intervalMs`) as uPlot
 * AlignedData: x in seconds (uPlot's default time scale), one column per rate, `null`
 * where the server had no rate. Pure.
 */
import type { OpsOverview, OpsRateName } from './ops-overview.js';

export type AlignedColumns = [number[], ...(number | null)[][]];

export function historyToAligned(h: OpsOverview['history'], names: readonly OpsRateName[]): AlignedColumns {
  const xs = h.timesMs.map((t) => t / 1000);
  return [xs, ...names.map((n) => [...(h.rates[n] ?? xs.map(() => null))])];
}
