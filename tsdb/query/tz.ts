/**
 * Timezone arithmetic for the query path, on Intl only (no tz package): validating a zone
 * name, wall-clock fields of an instant in a zone, and the instant of wall-clock fields.
 * Used for absolute dates in a request `timezone` (time.ts; OpenTSDB's SimpleDateFormat
 * with setTimeZone) and for calendar-aligned downsampling (downsample.ts CalendarGrid;
 * OpenTSDB's java.util.Calendar in `DateTime#previousInterval`).
 *
 * Wall-clock → instant follows Java's lenient calendar: out-of-range fields roll over
 * (month 13, day 0, hour 24); a wall time skipped by a DST jump is read with the offset in
 * force before the jump (02:30 on a spring-forward day becomes 03:30 DST); a repeated wall
 * time takes its first occurrence.
 */
import { TsdbError } from '../errors.js';

/** Wall-clock fields; `month` is 1-based. */
export interface ZonedFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat | null>();

function formatter(tz: string): Intl.DateTimeFormat | null {
  let f = formatters.get(tz);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: tz, hourCycle: 'h23', era: 'short',
        year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      });
    } catch {
      f = null;
    }
    if (formatters.size < 1000) formatters.set(tz, f);
  }
  return f;
}

function isUtc(tz: string): boolean {
  return tz === 'UTC' || tz === 'GMT' || tz === 'Etc/UTC';
}

/** True when Intl knows the zone (IANA names, case-insensitively, and UTC/GMT). */
export function isValidTimezone(tz: string): boolean {
  return tz.length > 0 && (isUtc(tz) || formatter(tz) !== null);
}

/** Throws TSDB_ILLEGAL_ARGUMENT `Invalid timezone name: <tz>` (DateTime#setTimeZone). */
export function checkTimezone(tz: string): void {
  if (!isValidTimezone(tz)) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid timezone name: ${tz}`);
}

/** The wall-clock fields of `epochMs` in `tz` (which must be valid). */
export function epochMsToZonedFields(epochMs: number, tz: string): ZonedFields {
  const millisecond = ((epochMs % 1000) + 1000) % 1000;
  if (isUtc(tz)) return utcFields(epochMs, millisecond);
  const f = formatter(tz);
  if (f === null) throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Invalid timezone name: ${tz}`);
  let year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  let bc = false;
  for (const p of f.formatToParts(epochMs - millisecond)) {
    const v = Number(p.value);
    switch (p.type) {
      case 'year': year = v; break;
      case 'month': month = v; break;
      case 'day': day = v; break;
      case 'hour': hour = v; break;
      case 'minute': minute = v; break;
      case 'second': second = v; break;
      case 'era': bc = p.value.startsWith('B'); break;
      default: break;
    }
  }
  return { year: bc ? 1 - year : year, month, day, hour, minute, second, millisecond };
}

function utcFields(epochMs: number, millisecond: number): ZonedFields {
  const d = new Date(epochMs);
  return {
    year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(),
    hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), millisecond,
  };
}

/** Wall-clock fields read as if they were UTC, with roll-over (years 0..99 kept as is). */
export function fieldsAsUtcMs(f: ZonedFields): number {
  const d = new Date(0);
  d.setUTCFullYear(f.year, f.month - 1, f.day);
  d.setUTCHours(f.hour, f.minute, f.second, f.millisecond);
  return d.getTime();
}

/** The zone's offset from UTC at the instant `epochMs`, in ms (positive east of Greenwich). */
export function zoneOffsetMs(epochMs: number, tz: string): number {
  if (isUtc(tz)) return 0;
  return fieldsAsUtcMs(epochMsToZonedFields(epochMs, tz)) - epochMs;
}

const HALF_DAY = 43_200_000;

/** The instant of wall-clock fields in `tz` (lenient; see the file header for DST). */
export function zonedFieldsToEpochMs(f: ZonedFields, tz: string): number {
  const local = fieldsAsUtcMs(f);
  if (isUtc(tz)) return local;
  const before = zoneOffsetMs(local - HALF_DAY, tz);
  const after = zoneOffsetMs(local + HALF_DAY, tz);
  const tBefore = local - before;
  if (zoneOffsetMs(tBefore, tz) === before) return tBefore;
  const tAfter = local - after;
  if (zoneOffsetMs(tAfter, tz) === after) return tAfter;
  return tBefore; // a wall time inside a DST gap
}
