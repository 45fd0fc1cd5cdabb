/**
 * Light and dark themes. The page's colours are CSS variables switched by
 * `<html data-theme>`; the chart's colours (canvas, not CSS) come from chartPalette().
 * Without an explicit choice the browser's preference decides.
 */
import type { ThemeName } from './dashboard-state.js';

export interface ChartPalette {
  readonly axis: string;
  readonly grid: string;
  readonly text: string;
  readonly background: string;
  readonly series: readonly string[];
}

const SERIES_LIGHT = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const SERIES_DARK = ['#5aa9ff', '#ff6b6b', '#5fd068', '#ffa94d', '#b197fc', '#d4a373', '#f783ac', '#3bc9db', '#adb5bd', '#d8e05a'];

export function chartPalette(theme: ThemeName): ChartPalette {
  return theme === 'dark'
    ? { axis: '#9aa4b2', grid: 'rgba(255,255,255,0.08)', text: '#d6dbe3', background: '#161a20', series: SERIES_DARK }
    : { axis: '#5b6472', grid: 'rgba(0,0,0,0.07)', text: '#1d232c', background: '#ffffff', series: SERIES_LIGHT };
}

export function preferredTheme(): ThemeName {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function resolveTheme(chosen: ThemeName | undefined): ThemeName {
  return chosen ?? preferredTheme();
}

export function applyTheme(theme: ThemeName): void {
  document.documentElement.dataset['theme'] = theme;
  document.documentElement.style.colorScheme = theme;
}
