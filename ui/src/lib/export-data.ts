/**
 * A panel's data as a file: CSV (one row per timestamp, one column per series, ISO 8601 UTC
 * times, empty cells for gaps; RFC 4180 quoting) or JSON (the columnar shape with series
 * names). Pure; the panel saves the text (panel-view.ts).
 */
import type { PanelData } from './to-aligned.js';

function csvCell(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(d: PanelData): string {
  const ts = d.data[0]!;
  const cols = d.data.slice(1);
  const lines = [['time', ...d.series.map((s) => s.label)].map(csvCell).join(',')];
  for (let i = 0; i < ts.length; i++) {
    let line = new Date(ts[i]!).toISOString();
    for (const c of cols) {
      const v = c[i];
      line += `,${v === null || v === undefined ? '' : String(v)}`;
    }
    lines.push(line);
  }
  return `${lines.join('\r\n')}\r\n`;
}

export function toJson(d: PanelData): string {
  return JSON.stringify({
    timestamps: Array.from(d.data[0]!),
    series: d.series.map((s, i) => ({ label: s.label, metric: s.metric, tags: s.tags, values: Array.from(d.data[i + 1]!) })),
  });
}

/** A file name from the panel title and range: `cpu-20260101T000000Z-20260101T010000Z.csv`. */
export function exportFileName(title: string, startMs: number, endMs: number, ext: 'csv' | 'json'): string {
  const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}/, '').replace(/[-:]/g, '');
  const base = title.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'panel';
  return `${base}-${stamp(startMs)}-${stamp(endMs)}.${ext}`;
}
