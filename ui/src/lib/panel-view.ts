/**
 * One panel on the page: title, query builder (panel-editor.ts), the chart, and a status
 * line ("3 series, 150,000 points · fetched 120 ms · drawn 18 ms"). load() fetches the
 * panel's sub-queries in one columnar request; a newer load() cancels an older one still
 * in flight. Empty and failed results show a readable message over the chart, for a
 * failure the server's own text.
 *
 * The panel element carries its state for tests and styling: data-state = idle | loading
 * | ok | empty | error, data-points, data-draw-ms.
 */
import { ApiError, fetchColumnar } from './api-client.js';
import { Chart } from './chart.js';
import { exportFileName, toCsv, toJson } from './export-data.js';
import type { Panel, ThemeName } from './dashboard-state.js';
import { h } from './dom.js';
import { formatCount, formatDurationMs } from './format.js';
import { isAbort, LatestRequest } from './latest-request.js';
import { formatMExpression } from './m-expression.js';
import { panelEditor } from './panel-editor.js';
import { buildQueryBody, sentQueryIndexes } from './query-request.js';
import type { ResolvedRange } from './time-range.js';
import { formatAbsolute } from './time-range.js';
import { countPoints, toPanelData } from './to-aligned.js';

export const CHART_HEIGHT = 300;

export interface PanelViewOptions {
  readonly aggregators: readonly string[];
  readonly theme: ThemeName;
  /** A committed edit of the panel (URL update + reload by the dashboard). */
  readonly onChange: (p: Panel) => void;
  readonly onRemove: (() => void) | undefined;
  readonly onZoom: (minMs: number, maxMs: number) => void;
  readonly onZoomOut: () => void;
}

export class PanelView {
  readonly el: HTMLElement;
  #panel: Panel;
  #theme: ThemeName;
  readonly #opts: PanelViewOptions;
  readonly #chart: Chart;
  readonly #overlay: HTMLElement;
  readonly #status: HTMLElement;
  readonly #editorBox: HTMLElement;
  readonly #latest = new LatestRequest();
  readonly #resize: ResizeObserver;
  #lastView: Parameters<Chart['show']>[0] | undefined;

  constructor(panel: Panel, opts: PanelViewOptions) {
    this.#panel = panel;
    this.#theme = opts.theme;
    this.#opts = opts;
    const title = h('input', { type: 'text', class: 'panel-title', placeholder: 'Untitled panel', 'aria-label': 'panel title' });
    title.value = panel.title;
    title.addEventListener('change', () => this.#commit({ ...this.#panel, title: title.value.trim() }));
    const editBtn = h('button', { type: 'button', class: 'edit', 'aria-expanded': 'false' }, 'Edit queries');
    const exportBtn = (ext: 'csv' | 'json'): HTMLButtonElement => {
      const b = h('button', { type: 'button', class: `export-${ext}`, title: `Download the panel's data as ${ext.toUpperCase()}` }, ext.toUpperCase());
      b.addEventListener('click', () => {
        const v = this.#lastView;
        if (v === undefined) return;
        const name = exportFileName(this.#panel.title, v.startMs, v.endMs, ext);
        if (ext === 'csv') download(toCsv(v.data), name, 'text/csv');
        else download(toJson(v.data), name, 'application/json');
      });
      return b;
    };
    const removeBtn = opts.onRemove === undefined ? null : h('button', { type: 'button', class: 'icon remove-panel', title: 'Remove this panel' }, '×');
    removeBtn?.addEventListener('click', () => opts.onRemove?.());
    this.#editorBox = h('div', { class: 'editor-box', hidden: true }, panelEditor(panel, { aggregators: opts.aggregators, onChange: (p) => this.#commit(p) }));
    editBtn.addEventListener('click', () => this.toggleEditor());
    const chartEl = h('div', { class: 'chart' });
    this.#overlay = h('div', { class: 'overlay', hidden: true });
    this.#status = h('div', { class: 'status' });
    this.el = h(
      'section',
      { class: 'panel', 'data-state': 'idle' },
      h('header', { class: 'panel-head' }, title, h('span', { class: 'exports' }, exportBtn('csv'), exportBtn('json')), editBtn, removeBtn),
      this.#editorBox,
      h('div', { class: 'chart-box' }, chartEl, this.#overlay),
      this.#status,
    );
    this.#chart = new Chart(chartEl, { theme: opts.theme, height: CHART_HEIGHT, onZoom: opts.onZoom, onZoomOut: opts.onZoomOut });
    this.#resize = new ResizeObserver(() => this.#chart.resize());
    this.#resize.observe(chartEl);
    if (panel.queries.every((q) => q.metric === '')) this.toggleEditor(true);
  }

  get panel(): Panel {
    return this.#panel;
  }

  get chart(): Chart {
    return this.#chart;
  }

  toggleEditor(open = this.#editorBox.hidden): void {
    this.#editorBox.hidden = !open;
    this.el.querySelector('button.edit')?.setAttribute('aria-expanded', String(open));
  }

  setTheme(theme: ThemeName): void {
    this.#theme = theme;
    if (this.#lastView !== undefined) this.#chart.show(this.#lastView, theme);
  }

  /** Fetches and draws the panel for `range`. Never rejects: failures are shown in the panel. */
  async load(range: ResolvedRange): Promise<void> {
    const panel = this.#panel;
    const body = buildQueryBody(panel.queries, range.startMs, range.endMs);
    if (body === undefined) {
      this.#latest.cancel();
      this.#chart.destroy();
      this.#lastView = undefined;
      this.#setState('idle', 'Pick a metric to chart: Edit queries → metric.', '');
      return;
    }
    this.el.dataset['state'] = 'loading';
    delete this.el.dataset['drawMs'];
    delete this.el.dataset['points'];
    this.#status.textContent = 'Loading…';
    const started = performance.now();
    try {
      const result = await this.#latest.run((signal) => fetchColumnar(body, signal));
      const arrived = performance.now();
      const fetchedMs = arrived - started;
      const data = toPanelData(result, panel.queries, sentQueryIndexes(panel.queries));
      if (data.series.length === 0) {
        this.#chart.destroy();
        this.#lastView = undefined;
        const what = panel.queries.filter((q) => q.metric !== '').map(formatMExpression).join(', ');
        this.#setState('empty', `No data for ${what} between ${formatAbsolute(range.startMs)} and ${formatAbsolute(range.endMs)}.`, `No series · fetched ${formatDurationMs(fetchedMs)}`);
        return;
      }
      const view = { panel, data, startMs: range.startMs, endMs: range.endMs };
      this.#lastView = view;
      this.#chart.onDrawn = (drawMs) => {
        const points = countPoints(data.data);
        this.el.dataset['points'] = String(points);
        this.el.dataset['drawMs'] = drawMs.toFixed(1);
        this.#status.textContent = `${data.series.length} series, ${formatCount(points)} points · fetched ${formatDurationMs(fetchedMs)} · drawn ${formatDurationMs(drawMs)}`;
      };
      this.#setState('ok', '', `${data.series.length} series · fetched ${formatDurationMs(fetchedMs)}`);
      this.#chart.show(view, this.#theme, arrived);
    } catch (err) {
      if (isAbort(err)) return;
      this.#chart.destroy();
      this.#lastView = undefined;
      const status = err instanceof ApiError ? ` (HTTP ${err.status})` : '';
      this.#setState('error', `${(err as Error).message}`, `Query failed${status}`);
    }
  }

  destroy(): void {
    this.#latest.cancel();
    this.#resize.disconnect();
    this.#chart.destroy();
    this.el.remove();
  }

  #commit(p: Panel): void {
    this.#panel = p;
    this.#opts.onChange(p);
  }

  #setState(state: 'idle' | 'ok' | 'empty' | 'error', message: string, status: string): void {
    this.el.dataset['state'] = state;
    this.#overlay.hidden = message === '';
    this.#overlay.textContent = message;
    this.#overlay.className = `overlay ${state}`;
    this.#status.textContent = status;
  }
}

/** Saves `text` as a file through a temporary link. */
function download(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: fileName });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
