/**
 * The dashboard's top bar: relative range presets, absolute from/to boxes (OpenTSDB's
 * formats; a bad entry turns red and says why), zoom out and shift, auto-refresh period,
 * refresh now, add panel, theme switch, and a link to the operator page.
 */
import type { DashboardState, ThemeName } from './dashboard-state.js';
import { h, select } from './dom.js';
import { formatAbsolute, RANGE_PRESETS, REFRESH_CHOICES, resolveRange } from './time-range.js';
import type { ResolvedRange } from './time-range.js';

export interface ToolbarActions {
  /** A new range; `push` adds a history entry (back undoes it). */
  readonly onRange: (start: string, end: string | undefined) => void;
  readonly onZoomOut: () => void;
  readonly onShift: (fraction: number) => void;
  readonly onRefreshPeriod: (sec: number) => void;
  readonly onRefreshNow: () => void;
  readonly onAddPanel: () => void;
  readonly onTheme: (t: ThemeName) => void;
}

export interface Toolbar {
  readonly el: HTMLElement;
  /** Shows the state's range (resolved for the boxes), period and theme. */
  update(state: DashboardState, range: ResolvedRange | undefined, theme: ThemeName): void;
}

function refreshLabel(sec: number): string {
  if (sec === 0) return 'Off';
  return sec < 60 ? `${sec}s` : sec < 3600 ? `${sec / 60}m` : `${sec / 3600}h`;
}

export function createToolbar(a: ToolbarActions): Toolbar {
  const presets = h('div', { class: 'presets', role: 'group', 'aria-label': 'relative range' });
  for (const p of RANGE_PRESETS) {
    const b = h('button', { type: 'button', 'data-start': p.start }, p.label);
    b.addEventListener('click', () => a.onRange(p.start, undefined));
    presets.append(b);
  }
  const from = h('input', { type: 'text', class: 'from', size: '16', 'aria-label': 'from', spellcheck: 'false' });
  const to = h('input', { type: 'text', class: 'to', size: '16', 'aria-label': 'to', placeholder: 'now', spellcheck: 'false' });
  const apply = h('button', { type: 'button', class: 'apply' }, 'Apply');
  const tryApply = (): void => {
    const start = from.value.trim();
    const end = to.value.trim() === '' || to.value.trim() === 'now' ? undefined : to.value.trim();
    try {
      resolveRange(start, end, Date.now());
      for (const el of [from, to]) {
        el.classList.remove('invalid');
        el.title = '';
      }
      a.onRange(start, end);
    } catch (err) {
      const bad = /start|Invalid time "([^"]*)"/.exec((err as Error).message);
      const target = bad?.[1] !== undefined && bad[1] === to.value.trim() ? to : from;
      target.classList.add('invalid');
      target.title = (err as Error).message;
    }
  };
  apply.addEventListener('click', tryApply);
  for (const el of [from, to]) el.addEventListener('keydown', (e) => e.key === 'Enter' && tryApply());
  const btn = (label: string, title: string, cls: string, fn: () => void): HTMLButtonElement => {
    const b = h('button', { type: 'button', class: cls, title }, label);
    b.addEventListener('click', fn);
    return b;
  };
  const refresh = select(
    REFRESH_CHOICES.map((s) => [String(s), refreshLabel(s)] as const),
    '0',
    { class: 'refresh-period', 'aria-label': 'auto-refresh', title: 'Auto-refresh' },
  );
  refresh.addEventListener('change', () => a.onRefreshPeriod(Number(refresh.value)));
  let theme: ThemeName = 'light';
  const themeBtn = btn('◐', 'Switch light/dark theme', 'theme', () => a.onTheme(theme === 'dark' ? 'light' : 'dark'));
  const el = h(
    'header',
    { class: 'toolbar' },
    h('a', { class: 'brand', href: '/' }, 'Horae'),
    h('a', { class: 'ops-link', href: '/operator', title: 'The operator page: regions, rates, hotspots' }, 'Operator'),
    presets,
    h('span', { class: 'range' }, from, h('span', { class: 'arrow' }, '→'), to, apply),
    btn('◀', 'Earlier (half a range)', 'shift-back', () => a.onShift(-0.5)),
    btn('−', 'Zoom out (×2)', 'zoom-out', a.onZoomOut),
    btn('▶', 'Later (half a range)', 'shift-fwd', () => a.onShift(0.5)),
    h('span', { class: 'spacer' }),
    btn('↻', 'Refresh now', 'refresh-now', a.onRefreshNow),
    refresh,
    btn('+ panel', 'Add a panel', 'add-panel', a.onAddPanel),
    themeBtn,
  );
  return {
    el,
    update(state, range, t) {
      theme = t;
      for (const b of presets.querySelectorAll<HTMLButtonElement>('button')) {
        b.classList.toggle('active', b.dataset['start'] === state.start && state.end === undefined);
      }
      const abs = (expr: string, ms: number | undefined): string => (/^[0-9]{11,}$/.test(expr) && ms !== undefined ? formatAbsolute(ms) : expr);
      if (document.activeElement !== from) from.value = abs(state.start, range?.startMs);
      if (document.activeElement !== to) to.value = state.end === undefined ? '' : abs(state.end, range?.endMs);
      from.classList.remove('invalid');
      to.classList.remove('invalid');
      const opt = String(state.refreshSec);
      if (![...refresh.options].some((o) => o.value === opt)) refresh.append(h('option', { value: opt }, refreshLabel(state.refreshSec)));
      refresh.value = opt;
    },
  };
}
