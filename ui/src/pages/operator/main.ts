/**
 * The operator page: polls GET /api/horae/overview every `?refresh=<ms>` (default 2000,
 * at least 250; `?theme=light|dark`, else the browser's preference) and redraws the tiles, the rate charts (the server's 15-minute history),
 * the write-distribution strips and the region tables; and GET /api/horae/cardinality
 * every 15 s (or the refresh, when longer) for the cardinality section. A failed refresh
 * keeps the last picture and says so in the status line; the next one retries.
 */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { ThemeName } from '../../lib/dashboard-state.js';
import { formatTimestamp } from '../../lib/format.js';
import { fetchCardinality } from '../../lib/ops-cardinality.js';
import { fetchOverview } from '../../lib/ops-overview.js';
import { SnapshotWindow } from '../../lib/ops-rates.js';
import { applyTheme, chartPalette, resolveTheme } from '../../lib/theme.js';
import { RateChart } from './charts.js';
import { renderCardinality } from './cardinality-view.js';
import { renderRegions } from './regions-view.js';
import { renderServers } from './servers-view.js';
import { renderAlerts, renderTiles } from './tiles.js';

const DEFAULT_REFRESH_MS = 2000;
const MIN_REFRESH_MS = 250;
/** Shares in the hotspot view compare the writes of the last minute. */
const SHARE_WINDOW_MS = 60_000;
/** The cardinality section refreshes at most this often (the server recounts at most once a minute). */
const CARDINALITY_REFRESH_MS = 15_000;
const CARDINALITY_TOP = 10;

const params = new URLSearchParams(location.search);

function refreshMs(): number {
  const v = Number(params.get('refresh'));
  return Number.isFinite(v) && v > 0 ? Math.max(MIN_REFRESH_MS, v) : DEFAULT_REFRESH_MS;
}

function chosenTheme(): ThemeName | undefined {
  const t = params.get('theme');
  return t === 'light' || t === 'dark' ? t : undefined;
}

/** The element with `id`; throws when the page lacks it (a broken page should say so). */
function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`operator page: no #${id}`);
  return e;
}

const theme = resolveTheme(chosenTheme());
applyTheme(theme);
const every = refreshMs();
const colours = chartPalette(theme).series;
const status = byId('status');
const snapshots = new SnapshotWindow(SHARE_WINDOW_MS);
const ingest = new RateChart({
  theme,
  target: byId('chart-ingest'),
  series: [
    { name: 'points', label: 'points/s', stroke: colours[0]!, scale: 'rate' },
    { name: 'cellsWritten', label: 'cells written/s', stroke: colours[4]!, scale: 'rate' },
  ],
});
const queries = new RateChart({
  theme,
  target: byId('chart-queries'),
  series: [
    { name: 'queries', label: 'queries/s', stroke: colours[2]!, scale: 'rate' },
    { name: 'rowsRead', label: 'rows read/s', stroke: colours[3]!, scale: 'rows' },
  ],
});
let refreshes = 0;

async function refresh(): Promise<void> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), Math.max(5000, every * 2));
  try {
    const o = await fetchOverview(ctl.signal);
    snapshots.push(o);
    renderAlerts(byId('alerts'), o);
    renderTiles(byId('tiles'), snapshots.previous, o);
    ingest.update(o.history, o.timeMs);
    queries.update(o.history, o.timeMs);
    renderServers(byId('servers'), o);
    renderRegions({ hotspots: byId('hotspots'), basis: byId('hot-basis'), tables: byId('tables') }, { latest: o, previous: snapshots.previous, oldest: snapshots.oldest });
    await refreshCardinality(ctl.signal);
    refreshes++;
    status.textContent = `updated ${formatTimestamp(o.timeMs)} · every ${every / 1000} s`;
    status.className = 'status ok';
    document.body.dataset['refreshes'] = String(refreshes);
  } catch (err) {
    status.textContent = `refresh failed: ${err instanceof Error ? err.message : String(err)} · retrying`;
    status.className = 'status error';
  } finally {
    clearTimeout(timer);
  }
}

let cardinalityAt = -Infinity;

/** Refreshes the cardinality section when due; a failure keeps the last one and says so. */
async function refreshCardinality(signal: AbortSignal): Promise<void> {
  if (performance.now() - cardinalityAt < Math.max(CARDINALITY_REFRESH_MS, every)) return;
  cardinalityAt = performance.now();
  const basis = byId('card-basis');
  try {
    renderCardinality(byId('cardinality'), basis, await fetchCardinality(CARDINALITY_TOP, signal));
  } catch (err) {
    basis.textContent = `refresh failed: ${err instanceof Error ? err.message : String(err)}`;
    cardinalityAt = -Infinity;
  }
}

async function loop(): Promise<void> {
  for (;;) {
    const started = performance.now();
    await refresh();
    await new Promise((r) => setTimeout(r, Math.max(0, every - (performance.now() - started))));
  }
}

window.addEventListener('resize', () => {
  ingest.resize();
  queries.resize();
});
void loop();
