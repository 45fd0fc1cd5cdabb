/**
 * Region key ranges for people: `bucket 3 · sys.cpu.user · 2026-01-01 00:00Z` where the
 * server decoded a data-table hint, the text of a printable key (UID table names), and
 * otherwise shortened hex. The empty key is the start or the end of the table. Pure.
 */
import type { OpsKeyHint } from './ops-overview.js';

/** Hex longer than this many bytes is cut with an ellipsis. */
export const MAX_HEX_BYTES = 12;

/** The text of a key made only of printable ASCII (space..~), else undefined. */
export function printableKey(hex: string): string | undefined {
  if (hex.length === 0 || hex.length % 2 !== 0) return undefined;
  let s = '';
  for (let i = 0; i < hex.length; i += 2) {
    const b = Number.parseInt(hex.slice(i, i + 2), 16);
    if (!(b >= 0x20 && b <= 0x7e)) return undefined;
    s += String.fromCharCode(b);
  }
  return s;
}

/** `0a0b0c…` (with the byte count) when longer than `maxBytes`. */
export function shortHex(hex: string, maxBytes = MAX_HEX_BYTES): string {
  if (hex.length <= maxBytes * 2) return hex;
  return `${hex.slice(0, maxBytes * 2)}… (${hex.length / 2} B)`;
}

/** `2026-01-01 00:00Z` for an epoch-seconds base hour. */
export function formatBaseHour(sec: number): string {
  const iso = new Date(sec * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;
}

/** The readable parts of a hint, or undefined when it has none. */
export function formatHint(h: OpsKeyHint | undefined): string | undefined {
  if (h === undefined) return undefined;
  const parts: string[] = [];
  if (h.salt !== undefined) parts.push(`bucket ${h.salt}`);
  if (h.metric !== undefined) parts.push(h.metric);
  else if (h.metricUid !== undefined) parts.push(`metric #${h.metricUid}`);
  if (h.baseTimeSec !== undefined) parts.push(formatBaseHour(h.baseTimeSec));
  return parts.length === 0 ? undefined : parts.join(' · ');
}

/** One boundary: the hint, else the printable text in quotes, else short hex. */
export function formatKey(hex: string, side: 'start' | 'end', hint?: OpsKeyHint): string {
  if (hex === '') return side === 'start' ? '(table start)' : '(table end)';
  const h = formatHint(hint);
  if (h !== undefined) return h;
  const text = printableKey(hex);
  return text === undefined ? shortHex(hex) : JSON.stringify(text);
}

/** `start → end` of a region. */
export function formatKeyRange(r: { readonly start: string; readonly end: string; readonly startHint?: OpsKeyHint; readonly endHint?: OpsKeyHint }): string {
  return `${formatKey(r.start, 'start', r.startHint)} → ${formatKey(r.end, 'end', r.endHint)}`;
}
