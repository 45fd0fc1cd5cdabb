/**
 * The dashboard controller: one DashboardState, mirrored in the URL hash, rendered as a
 * toolbar and a column of panels sharing one time range and one synced cursor.
 *
 * - Edits replace the history entry; range changes (presets, zoom, shift) push one, so
 *   Back undoes a zoom. A hash typed or pasted by hand (or Back/Forward) rebuilds the view.
 * - Every reload resolves the range once, so all panels ask for the same instant.
 * - Auto-refresh never stacks requests (a tick is skipped while any panel is loading) and
 *   pauses while the tab is hidden.
 */
import { aggregators } from './api-client.js';
import { warmUpChart } from './chart.js';
import type { DashboardState, Panel, ThemeName } from './dashboard-state.js';
import { emptyPanel } from './dashboard-state.js';
import { h } from './dom.js';
import { PanelView } from './panel-view.js';
import { isRelative, resolveRange, shiftRange, zoomOut, zoomOutRelative, zoomTo } from './time-range.js';
import type { ResolvedRange } from './time-range.js';
import { createToolbar } from './toolbar.js';
import type { Toolbar } from './toolbar.js';
import { applyTheme, resolveTheme } from './theme.js';
import { formatHash, parseHash } from './url-state.js';

/** Used when /api/aggregators cannot be reached; the server still validates. */
const FALLBACK_AGGREGATORS = ['avg', 'count', 'dev', 'first', 'last', 'max', 'min', 'none', 'p50', 'p90', 'p95', 'p99', 'sum', 'zimsum'];

export class Dashboard {
  readonly el: HTMLElement;
  #state: DashboardState;
  #range: ResolvedRange | undefined;
  #theme: ThemeName;
  #views: PanelView[] = [];
  #aggs: readonly string[] = FALLBACK_AGGREGATORS;
  #writtenHash = '';
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #toolbar: Toolbar;
  readonly #banner: HTMLElement;
  readonly #panels: HTMLElement;

  constructor() {
    this.#toolbar = createToolbar({
      onRange: (start, end) => this.#setRange(start, end),
      onZoomOut: () => this.#zoomOut(),
      onShift: (f) => this.#range !== undefined && this.#setRangeAbs(shiftRange(this.#range, f)),
      onRefreshPeriod: (sec) => {
        this.#update({ ...this.#state, refreshSec: sec }, false);
        this.#schedule();
      },
      onRefreshNow: () => this.reload(),
      onAddPanel: () => {
        const panels = [...this.#state.panels, emptyPanel()];
        this.#update({ ...this.#state, panels }, false);
        this.#renderPanels();
        this.reload();
      },
      onTheme: (t) => {
        this.#update({ ...this.#state, theme: t }, false);
        this.#applyTheme();
      },
    });
    this.#banner = h('div', { class: 'banner', hidden: true, role: 'alert' });
    this.#panels = h('main', { class: 'panels' });
    this.el = h('div', { class: 'dashboard' }, this.#toolbar.el, this.#banner, this.#panels);
    const parsed = parseHash(location.hash);
    this.#state = parsed.state;
    this.#theme = resolveTheme(this.#state.theme);
    this.#showErrors(parsed.errors);
    window.addEventListener('popstate', () => this.#fromUrl());
    window.addEventListener('hashchange', () => this.#fromUrl());
    // Without an explicit theme= the page follows the system's light/dark switch live.
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      if (this.#state.theme === undefined) this.#applyTheme();
    });
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.#state.refreshSec > 0) this.reload();
    });
  }

  /** Loads the aggregator list, renders, and starts fetching. */
  async start(): Promise<void> {
    applyTheme(this.#theme);
    this.#writeUrl(false);
    this.#aggs = await aggregators().catch(() => FALLBACK_AGGREGATORS);
    this.#renderPanels();
    this.reload();
    // NB: after reload() has sent the queries, so the warm-up overlaps the network wait.
    if (this.#views.some((v) => v.el.dataset['state'] === 'loading')) warmUpChart(this.#theme);
    this.#schedule();
  }

  get state(): DashboardState {
    return this.#state;
  }

  get views(): readonly PanelView[] {
    return this.#views;
  }

  /** Resolves the range now and loads every panel. */
  reload(): void {
    try {
      this.#range = resolveRange(this.#state.start, this.#state.end, Date.now());
    } catch (err) {
      this.#range = undefined;
      this.#showErrors([(err as Error).message]);
      this.#toolbar.update(this.#state, undefined, this.#theme);
      return;
    }
    this.#toolbar.update(this.#state, this.#range, this.#theme);
    const r = this.#range;
    for (const v of this.#views) void v.load(r);
  }

  #fromUrl(): void {
    if (location.hash.replace(/^#/, '') === this.#writtenHash) return;
    const parsed = parseHash(location.hash);
    this.#state = parsed.state;
    this.#writtenHash = formatHash(this.#state);
    this.#showErrors(parsed.errors);
    this.#applyTheme();
    this.#renderPanels();
    this.reload();
    this.#schedule();
  }

  #update(next: DashboardState, push: boolean): void {
    this.#state = next;
    this.#writeUrl(push);
  }

  #writeUrl(push: boolean): void {
    const hash = formatHash(this.#state);
    if (hash === this.#writtenHash && location.hash.replace(/^#/, '') === hash) return;
    this.#writtenHash = hash;
    history[push ? 'pushState' : 'replaceState'](null, '', `#${hash}`);
  }

  #setRange(start: string, end: string | undefined): void {
    const { end: _drop, ...rest } = this.#state;
    this.#update(end === undefined ? { ...rest, start } : { ...rest, start, end }, true);
    this.#showErrors([]);
    this.reload();
  }

  #setRangeAbs(r: { start: string; end: string }): void {
    this.#setRange(r.start, r.end);
  }

  #zoomOut(): void {
    const rel = isRelative(this.#state.start, this.#state.end) ? zoomOutRelative(this.#state.start) : undefined;
    if (rel !== undefined) this.#setRange(rel, undefined);
    else if (this.#range !== undefined) this.#setRangeAbs(zoomOut(this.#range, Date.now()));
  }

  #applyTheme(): void {
    this.#theme = resolveTheme(this.#state.theme);
    applyTheme(this.#theme);
    for (const v of this.#views) v.setTheme(this.#theme);
    this.#toolbar.update(this.#state, this.#range, this.#theme);
  }

  #renderPanels(): void {
    for (const v of this.#views) v.destroy();
    this.#views = this.#state.panels.map((p, i) => this.#panelView(p, i));
    this.#panels.replaceChildren(...this.#views.map((v) => v.el));
  }

  #panelView(p: Panel, i: number): PanelView {
    const view: PanelView = new PanelView(p, {
      aggregators: this.#aggs,
      theme: this.#theme,
      onChange: (np) => {
        const idx = this.#views.indexOf(view);
        this.#update({ ...this.#state, panels: this.#state.panels.map((o, j) => (j === idx ? np : o)) }, false);
        if (this.#range !== undefined) void view.load(this.#range);
      },
      onRemove:
        this.#state.panels.length > 1 || i > 0
          ? () => {
              const idx = this.#views.indexOf(view);
              this.#update({ ...this.#state, panels: this.#state.panels.filter((_, j) => j !== idx) }, false);
              this.#renderPanels();
              this.reload();
            }
          : undefined,
      onZoom: (min, max) => this.#setRangeAbs(zoomTo(min, max)),
      onZoomOut: () => this.#zoomOut(),
    });
    return view;
  }

  #schedule(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const sec = this.#state.refreshSec;
    if (sec <= 0) return;
    this.#timer = setInterval(() => {
      if (document.visibilityState === 'hidden') return;
      if (this.#views.some((v) => v.el.dataset['state'] === 'loading')) return;
      this.reload();
    }, sec * 1000);
  }

  #showErrors(errors: readonly string[]): void {
    this.#banner.hidden = errors.length === 0;
    this.#banner.replaceChildren(...errors.map((e) => h('div', {}, e)));
  }
}
