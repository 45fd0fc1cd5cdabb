/**
 * Formatting for the operator page beyond lib/format.ts: byte sizes, rates, ratios and
 * ages. Pure and locale-free.
 */
import { formatAxisValue } from './format.js';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `0 B`, `512 B`, `1.5 KiB`, `12.3 MiB` (binary units, 3 significant digits). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const s = u === 0 ? String(Math.round(v)) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return `${n < 0 ? '-' : ''}${s} ${UNITS[u]}`;
}

/** `12.5k/s`; `—` when unknown. */
export function formatRate(perSec: number | null | undefined): string {
  if (perSec === null || perSec === undefined || !Number.isFinite(perSec)) return '—';
  return `${formatAxisValue(perSec)}/s`;
}

/** `97.5%`; `—` when unknown. */
export function formatPercent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—';
  const p = ratio * 100;
  return `${p === 100 || p === 0 ? p.toFixed(0) : p >= 10 ? p.toFixed(1) : p.toFixed(2)}%`;
}

/** `45 s`, `12 min`, `3 h 05 min`, `2 d 4 h`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${String(min % 60).padStart(2, '0')} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
