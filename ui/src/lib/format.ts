/**
 * Number and time formatting for axes, legends and status lines. Pure; locale-free
 * (the same text in every browser and in tests).
 */

const SI: readonly [number, string][] = [
  [1e15, 'P'],
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/** Trims a fixed-point rendering: 1.500 → 1.5, 2.000 → 2. */
function trim(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Axis ticks: SI prefixes from 10k up (`12.5k`, `3M`), plain below, `1.2e-7` for tiny values. */
export function formatAxisValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e4) {
    for (const [f, p] of SI) {
      if (a < f) continue;
      const x = a / f;
      return trim((v / f).toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)) + p;
    }
  }
  if (a < 1e-3) return v.toExponential(1);
  return trim(v.toFixed(a >= 100 ? 1 : a >= 1 ? 2 : 4));
}

/** Legend values: exact enough to read (up to 6 significant digits), `—` for no value. */
export function formatLegendValue(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  if (!Number.isFinite(v)) return String(v);
  if (v !== 0 && (Math.abs(v) >= 1e15 || Math.abs(v) < 1e-4)) return v.toExponential(4);
  if (Number.isInteger(v)) return String(v);
  return trim(v.toPrecision(6).includes('e') ? v.toFixed(4) : v.toPrecision(6));
}

/** `1,234,567` with thin grouping, for counts in status lines. */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `850 ms`, `1.2 s`, `3.4 ms`. */
export function formatDurationMs(ms: number): string {
  if (ms < 10) return `${trim(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${trim((ms / 1000).toFixed(1))} s`;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** The legend's time under the cursor: `2026-01-01 12:34:56` (`.789` when not on a whole second). */
export function formatTimestamp(ms: number, utc = false): string {
  const d = new Date(ms);
  const [y, mo, da, h, mi, s, msec] = utc
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds()];
  return `${y}-${pad(mo)}-${pad(da)} ${pad(h)}:${pad(mi)}:${pad(s)}${msec === 0 ? '' : `.${pad(msec, 3)}`}`;
}

/**
 * Time-axis tick labels in 24-hour time, as precise as the tick spacing needs: `HH:mm:ss.SSS`
 * below a second, `HH:mm:ss` below a minute, `HH:mm` below a day, `MM-dd` above; the first
 * tick and every tick on a new day (or year, for day ticks) get the date on a second line.
 */
export function formatTimeTicks(splitsMs: readonly number[], incrMs: number, utc = false): string[] {
  let prevDay = '';
  let prevYear = '';
  return splitsMs.map((ms) => {
    const full = formatTimestamp(Math.round(ms), utc);
    const day = full.slice(5, 10);
    const year = full.slice(0, 4);
    const time = full.slice(11, 19);
    const millis = new Date(ms)[utc ? 'getUTCMilliseconds' : 'getMilliseconds']();
    let label: string;
    if (incrMs >= 86_400_000) {
      label = year !== prevYear ? `${day}\n${year}` : day;
    } else {
      const t = incrMs < 1000 ? `${time}.${String(millis).padStart(3, '0')}` : incrMs < 60_000 ? time : time.slice(0, 5);
      label = day !== prevDay ? `${t}\n${day}` : t;
    }
    prevDay = day;
    prevYear = year;
    return label;
  });
}
