/**
 * Progress reporting for long CLI runs (import). On a terminal: one bar redrawn in place
 * on stderr (bytes read of total, points, points/s), at most ~10 times a second. Elsewhere
 * (a log file, CI): one plain line every few seconds, so logs stay readable.
 */

/** Where CLI output goes: process.stdout/stderr, or a buffer in tests. */
export interface CliWriter {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressState {
  readonly bytesRead: number;
  readonly bytesTotal: number;
  readonly points: number;
}

export interface ProgressOptions {
  /** Redraw in place (default: out.isTTY). */
  readonly tty?: boolean;
  /** Clock in ms (tests pass a fake). */
  readonly now?: () => number;
  /** Non-TTY: ms between lines (default 5000). */
  readonly lineIntervalMs?: number;
  /** Prefix of each report, e.g. 'import'. */
  readonly label?: string;
}

const TTY_REDRAW_MS = 100;
const BAR_WIDTH = 24;

export class Progress {
  private readonly out: CliWriter;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly label: string;
  private readonly started: number;
  private lastReport: number;
  private drawn = false;

  constructor(out: CliWriter, opts: ProgressOptions = {}) {
    this.out = out;
    this.tty = opts.tty ?? out.isTTY === true;
    this.now = opts.now ?? Date.now;
    this.intervalMs = this.tty ? TTY_REDRAW_MS : opts.lineIntervalMs ?? 5000;
    this.label = opts.label ?? 'progress';
    this.started = this.now();
    this.lastReport = this.started;
  }

  /** Milliseconds since the progress started. */
  elapsedMs(): number {
    return this.now() - this.started;
  }

  /** Reports `s` if the interval has passed since the last report. Cheap otherwise. */
  update(s: ProgressState): void {
    const t = this.now();
    if (t - this.lastReport < this.intervalMs) return;
    this.lastReport = t;
    if (this.tty) {
      this.out.write(`\r${this.barLine(s, t)}\x1b[K`);
      this.drawn = true;
    } else {
      this.out.write(`${this.label}: ${this.plainLine(s, t)}\n`);
    }
  }

  /** Clears the bar (TTY) so the final summary starts on a clean line. */
  finish(): void {
    if (this.tty && this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }

  private rate(points: number, t: number): number {
    const s = (t - this.started) / 1000;
    return s > 0 ? Math.round(points / s) : 0;
  }

  private plainLine(s: ProgressState, t: number): string {
    return `${formatBytes(s.bytesRead)} of ${formatBytes(s.bytesTotal)} (${percent(s)}%), ` +
      `${s.points} points, ${this.rate(s.points, t)} points/s`;
  }

  private barLine(s: ProgressState, t: number): string {
    const frac = s.bytesTotal > 0 ? Math.min(1, s.bytesRead / s.bytesTotal) : 0;
    const full = Math.round(frac * BAR_WIDTH);
    const bar = `[${'#'.repeat(full)}${'-'.repeat(BAR_WIDTH - full)}]`;
    const line = `${bar} ${String(percent(s)).padStart(3)}% ${formatBytes(s.bytesRead)}/${formatBytes(s.bytesTotal)} ` +
      `${s.points} points ${this.rate(s.points, t)} points/s`;
    const cols = this.out.columns;
    return cols !== undefined && cols > 10 && line.length >= cols ? line.slice(0, cols - 1) : line;
  }
}

function percent(s: ProgressState): number {
  return s.bytesTotal > 0 ? Math.min(100, Math.floor((100 * s.bytesRead) / s.bytesTotal)) : 0;
}

/** 1536 → '1.5 KiB'. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** Seconds with up to 3 decimals, for summaries. */
export function formatSeconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 3 : 1);
}
