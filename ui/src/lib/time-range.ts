/**
 * Time expressions and ranges, resolved to epoch milliseconds in the browser so every panel
 * of one refresh asks for the same instant and the chart's x scale matches the request.
 *
 * Accepted (OpenTSDB's and Grafana's syntax): `now`; `<n><unit>-ago` and `now-<n><unit>`
 * with units ms s m h d w n (30 days) y (365 days); epoch seconds (≤ 10 digits) or
 * milliseconds (13 digits); `yyyy/MM/dd[-HH:mm[:ss]]` and `yyyy-MM-ddTHH:mm[:ss][Z]`, read
 * in the browser's time zone unless they carry a zone. Pure.
 */

export const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  n: 30 * 86_400_000,
  y: 365 * 86_400_000,
};

/** Relative presets offered by the picker, as start expressions. */
export const RANGE_PRESETS: readonly { readonly label: string; readonly start: string }[] = [
  { label: '15m', start: '15m-ago' },
  { label: '30m', start: '30m-ago' },
  { label: '1h', start: '1h-ago' },
  { label: '3h', start: '3h-ago' },
  { label: '6h', start: '6h-ago' },
  { label: '12h', start: '12h-ago' },
  { label: '24h', start: '24h-ago' },
  { label: '2d', start: '2d-ago' },
  { label: '7d', start: '7d-ago' },
  { label: '30d', start: '30d-ago' },
];

/** Auto-refresh choices in seconds (0 = off). OpenTSDB's UI allows nothing under 5 s. */
export const REFRESH_CHOICES: readonly number[] = [0, 5, 10, 30, 60, 300, 900, 3600];

export class TimeExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeExpressionError';
  }
}

/** Parses one time expression to epoch ms; throws TimeExpressionError naming the input. */
export function parseTime(expr: string, nowMs: number): number {
  const s = expr.trim();
  if (s === '' || s === 'now') return nowMs;
  let m = /^([0-9]+)(ms|s|m|h|d|w|n|y)-ago$/.exec(s) ?? /^now-([0-9]+)(ms|s|m|h|d|w|n|y)$/.exec(s);
  if (m !== null) return nowMs - Number(m[1]) * UNIT_MS[m[2]!]!;
  if (/^[0-9]+(\.[0-9]+)?$/.test(s)) {
    const n = Number(s);
    const intDigits = s.split('.')[0]!.length;
    return intDigits <= 10 ? Math.round(n * 1000) : Math.round(n);
  }
  m = /^([0-9]{4})\/([0-9]{1,2})\/([0-9]{1,2})(?:-([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?)?$/.exec(s);
  if (m !== null) {
    const [, y, mo, d, h = '0', mi = '0', sec = '0'] = m;
    const t = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec)).getTime();
    if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) {
      throw new TimeExpressionError(`Invalid time "${expr}": out-of-range field`);
    }
    return t;
  }
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}/.test(s)) {
    const t = Date.parse(s);
    if (!Number.isNaN(t)) return t;
  }
  throw new TimeExpressionError(`Invalid time "${expr}": use 1h-ago, now-1h, epoch seconds or ms, or yyyy/MM/dd-HH:mm:ss`);
}

export interface ResolvedRange {
  readonly startMs: number;
  readonly endMs: number;
}

/** Resolves start/end expressions; throws when either is invalid or start is not before end. */
export function resolveRange(start: string, end: string | undefined, nowMs: number): ResolvedRange {
  const startMs = parseTime(start, nowMs);
  const endMs = end === undefined || end === '' ? nowMs : parseTime(end, nowMs);
  if (startMs >= endMs) throw new TimeExpressionError(`Invalid range: start (${start}) must be before end (${end ?? 'now'})`);
  return { startMs, endMs };
}

/** True when the range moves with the clock (end is now), so auto-refresh slides it. */
export function isRelative(start: string, end: string | undefined): boolean {
  return (end === undefined || end === '' || end === 'now') && /ago$|^now-/.test(start.trim());
}

/** The absolute range a zoom selection asks for, as URL expressions (epoch ms). */
export function zoomTo(minMs: number, maxMs: number): { start: string; end: string } {
  const a = Math.floor(Math.min(minMs, maxMs));
  const b = Math.ceil(Math.max(minMs, maxMs));
  return { start: String(a), end: String(b === a ? a + 1 : b) };
}

/**
 * Zoom out of a relative range stays relative (`1h-ago` → `2h-ago`, `now-15m` → `now-30m`),
 * so auto-refresh keeps sliding; undefined when `start` is not a relative expression.
 */
export function zoomOutRelative(start: string): string | undefined {
  const s = start.trim();
  const ago = /^([0-9]+)(ms|s|m|h|d|w|n|y)-ago$/.exec(s);
  if (ago !== null) return `${Number(ago[1]) * 2}${ago[2]}-ago`;
  const now = /^now-([0-9]+)(ms|s|m|h|d|w|n|y)$/.exec(s);
  if (now !== null) return `now-${Number(now[1]) * 2}${now[2]}`;
  return undefined;
}

/** Twice as wide around the same centre (never past now when the range ended at now). */
export function zoomOut(r: ResolvedRange, nowMs: number): { start: string; end: string } {
  const span = r.endMs - r.startMs;
  let end = r.endMs + span / 2;
  if (end > nowMs) end = Math.max(nowMs, r.endMs);
  return zoomTo(end - 2 * span, end);
}

/** Shifts by `fraction` of the span (negative = back in time). */
export function shiftRange(r: ResolvedRange, fraction: number): { start: string; end: string } {
  const d = (r.endMs - r.startMs) * fraction;
  return zoomTo(r.startMs + d, r.endMs + d);
}

/** `yyyy/MM/dd-HH:mm:ss` in local time: OpenTSDB's absolute format, for the from/to boxes. */
export function formatAbsolute(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())}-${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** How a start/end pair reads in the picker: `Last 1h`, or both ends formatted. */
export function describeRange(start: string, end: string | undefined, nowMs: number): string {
  const preset = RANGE_PRESETS.find((p) => p.start === start.trim());
  if (preset !== undefined && (end === undefined || end === '' || end === 'now')) return `Last ${preset.label}`;
  try {
    const r = resolveRange(start, end, nowMs);
    return `${formatAbsolute(r.startMs)} → ${end === undefined || end === '' ? 'now' : formatAbsolute(r.endMs)}`;
  } catch {
    return `${start} → ${end ?? 'now'}`;
  }
}
