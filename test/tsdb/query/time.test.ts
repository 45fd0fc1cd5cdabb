/**
 * OpenTSDB's query time syntax (tsdb/query/time.ts, tz.ts). Every case uses a fixed
 * `now`; expected instants were computed independently (Python zoneinfo).
 */
import { describe, expect, it } from 'vitest';
import { isTsdbError } from '../../../tsdb/errors.js';
import { parseDateTime, parseDuration, parseJavaLong, splitDuration } from '../../../tsdb/query/time.js';
import {
  epochMsToZonedFields, isValidTimezone, zonedFieldsToEpochMs, zoneOffsetMs,
} from '../../../tsdb/query/tz.js';

const NOW = 1_700_000_000_123;
const H = 3_600_000;
const D = 24 * H;

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isTsdbError(e, 'TSDB_ILLEGAL_ARGUMENT')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseDuration', () => {
  it('knows ms, s, m, h, d, w, n (30 d) and y (365 d)', () => {
    expect(['1ms', '1s', '1m', '1h', '1d', '1w', '1n', '1y'].map(parseDuration))
      .toEqual([1, 1000, 60_000, H, D, 7 * D, 30 * D, 365 * D]);
    expect(parseDuration('15m')).toBe(15 * 60_000);
    expect(parseDuration('1500ms')).toBe(1500);
  });

  it('lower-cases the unit, so 1M is a minute, and reads only the last character', () => {
    expect(parseDuration('1M')).toBe(60_000);
    expect(parseDuration('2H')).toBe(2 * H);
    // OpenTSDB looks at the last character only: "1hours" ends in s, so it is one second.
    expect(parseDuration('1hours')).toBe(1000);
    // `ms` needs a lower-case m before the s.
    expect(parseDuration('5MS')).toBe(5000);
  });

  it('rejects what OpenTSDB rejects, with its messages', () => {
    expect(errorOf(() => parseDuration('0s'))).toBe('Zero or negative duration: 0s');
    expect(errorOf(() => parseDuration('60'))).toBe('Invalid duration, must have an integer and unit: 60');
    expect(errorOf(() => parseDuration('s'))).toBe('Invalid duration (number): s');
    expect(errorOf(() => parseDuration('-60s'))).toBe('Invalid duration (number): -60s');
    expect(errorOf(() => parseDuration('60p'))).toBe('Invalid duration (suffix): 60p');
    expect(errorOf(() => parseDuration('4611686018427387904y'))).toBe('Duration must be < Long.MAX_VALUE ms: 4611686018427387904y');
    expect(errorOf(() => parseDuration('6393590450230209347573980s'))).toBe('Invalid duration (number): 6393590450230209347573980s');
  });

  it('splits count and unit as the calendar code needs them', () => {
    expect(splitDuration('15m')).toEqual({ count: 15, unit: 'm' });
    expect(splitDuration('500ms')).toEqual({ count: 500, unit: 'ms' });
    expect(splitDuration('1N')).toEqual({ count: 1, unit: 'n' });
    expect(splitDuration('1hours')).toBeUndefined();
    expect(splitDuration('d')).toBeUndefined();
  });
});

describe('parseDateTime: relative and now', () => {
  it('subtracts every unit from now, case-insensitively', () => {
    expect(parseDateTime('1h-ago', NOW)).toBe(NOW - H);
    expect(parseDateTime('1H-AGO', NOW)).toBe(NOW - H);
    expect(parseDateTime('30s-ago', NOW)).toBe(NOW - 30_000);
    expect(parseDateTime('250ms-ago', NOW)).toBe(NOW - 250);
    expect(parseDateTime('5m-ago', NOW)).toBe(NOW - 300_000);
    expect(parseDateTime('2d-ago', NOW)).toBe(NOW - 2 * D);
    expect(parseDateTime('1w-ago', NOW)).toBe(NOW - 7 * D);
    expect(parseDateTime('1n-ago', NOW)).toBe(NOW - 30 * D);
    expect(parseDateTime('1y-ago', NOW)).toBe(NOW - 365 * D);
    expect(parseDateTime('now', NOW)).toBe(NOW);
    expect(parseDateTime('NoW', NOW)).toBe(NOW);
    expect(errorOf(() => parseDateTime('0h-ago', NOW))).toBe('Zero or negative duration: 0h');
  });
});

describe('parseDateTime: epoch numbers', () => {
  it('reads 10 characters or fewer as seconds, longer as milliseconds', () => {
    expect(parseDateTime('1355961600', NOW)).toBe(1_355_961_600_000);
    expect(parseDateTime('1355961600000', NOW)).toBe(1_355_961_600_000);
    expect(parseDateTime('1', NOW)).toBe(1000);
    expect(parseDateTime('0', NOW)).toBe(0);
    expect(parseDateTime('12345678901', NOW)).toBe(12_345_678_901);
    expect(parseDateTime('+1355961600', NOW)).toBe(1_355_961_600);
  });

  it('reads <10 digits>.<1-3 digits> by removing the dot, and <n>ms as ms', () => {
    expect(parseDateTime('1355961600.123', NOW)).toBe(1_355_961_600_123);
    // OpenTSDB's quirk: only three decimals are exact.
    expect(parseDateTime('1355961600.5', NOW)).toBe(13_559_616_005);
    expect(parseDateTime('500ms', NOW)).toBe(500);
    expect(parseDateTime('1355961600123ms', NOW)).toBe(1_355_961_600_123);
  });

  it('rejects bad numbers with OpenTSDB messages', () => {
    const dotted = 'Millisecond timestamps must be in the format <seconds>.<ms> where the milliseconds are limited to 3 digits';
    expect(errorOf(() => parseDateTime('1355961600.1234', NOW))).toBe(`Invalid time: 1355961600.1234. ${dotted}`);
    expect(errorOf(() => parseDateTime('12.5', NOW))).toBe(`Invalid time: 12.5. ${dotted}`);
    expect(errorOf(() => parseDateTime('-5', NOW))).toBe('Invalid time: -5. Negative timestamps are not supported.');
    expect(errorOf(() => parseDateTime('abc', NOW))).toBe("Invalid time: abc. Invalid character 'a' in abc");
    expect(errorOf(() => parseDateTime('99999999999999999999', NOW))).toBe('Invalid time: 99999999999999999999. Value too long: 99999999999999999999');
  });

  it('parses Java longs like Tags.parseLong', () => {
    expect(parseJavaLong('-9223372036854775808')).toBe(-9223372036854775808n);
    expect(() => parseJavaLong('9223372036854775808')).toThrow('Overflow in 9223372036854775808');
    expect(() => parseJavaLong('-')).toThrow('Just a sign, no value: -');
    expect(() => parseJavaLong('')).toThrow('Empty string');
  });
});

describe('parseDateTime: absolute dates', () => {
  it('picks the format by length, in UTC by default', () => {
    expect(parseDateTime('2013/01/01', NOW)).toBe(1_356_998_400_000);
    expect(parseDateTime('2013/01/01-01:02', NOW)).toBe(1_357_002_120_000);
    expect(parseDateTime('2013/01/01 01:02', NOW)).toBe(1_357_002_120_000);
    expect(parseDateTime('2013/01/01-01:02:03', NOW)).toBe(1_357_002_123_000);
    expect(parseDateTime('2013/01/01 01:02:03', NOW)).toBe(1_357_002_123_000);
  });

  it('reads the wall clock of the request timezone', () => {
    expect(parseDateTime('2013/01/01', NOW, 'America/Denver')).toBe(1_357_023_600_000);
    expect(parseDateTime('2013/06/15 12:00', NOW, 'Asia/Kolkata')).toBe(1_371_277_800_000);
    // A wall time inside the spring-forward gap moves forward (02:30 → 03:30 MDT) ...
    expect(parseDateTime('2013/03/10 02:30', NOW, 'America/Denver')).toBe(1_362_907_800_000);
    // ... and a repeated one takes its first occurrence.
    expect(parseDateTime('2013/11/03 01:30', NOW, 'America/Denver')).toBe(1_383_463_800_000);
  });

  it('is lenient like SimpleDateFormat: fields roll over, trailing text is ignored', () => {
    expect(parseDateTime('2013/13/01', NOW)).toBe(1_388_534_400_000);
    expect(parseDateTime('2013/02/29', NOW)).toBe(1_362_096_000_000);
    expect(parseDateTime('2013/1/1/0', NOW)).toBe(1_356_998_400_000);
  });

  it('rejects other lengths, unparseable text and unknown zones', () => {
    expect(errorOf(() => parseDateTime('2013/01/01 00', NOW))).toBe('Invalid absolute date: 2013/01/01 00');
    expect(errorOf(() => parseDateTime('2013-01-01T00:00:00', NOW)))
      .toBe('Invalid date: 2013-01-01T00:00:00. Unparseable date: "2013-01-01T00:00:00"');
    expect(errorOf(() => parseDateTime('2013/01/01', NOW, 'Mars/Olympus'))).toBe('Invalid timezone name: Mars/Olympus');
  });
});

describe('timezone helpers', () => {
  it('validates zone names through Intl', () => {
    expect(isValidTimezone('UTC')).toBe(true);
    expect(isValidTimezone('Europe/Paris')).toBe(true);
    expect(isValidTimezone('Mars/Olympus')).toBe(false);
    expect(isValidTimezone('')).toBe(false);
  });

  it('converts between instants and wall-clock fields, DST included', () => {
    expect(zoneOffsetMs(1_357_023_600_000, 'America/Denver')).toBe(-7 * H);
    expect(zoneOffsetMs(1_371_277_800_000, 'America/Denver')).toBe(-6 * H);
    expect(epochMsToZonedFields(1_357_023_600_250, 'America/Denver'))
      .toEqual({ year: 2013, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 250 });
    expect(zonedFieldsToEpochMs({ year: 2012, month: 12, day: 32, hour: 0, minute: 0, second: 0, millisecond: 0 }, 'America/Denver'))
      .toBe(1_357_023_600_000);
    expect(epochMsToZonedFields(-1, 'UTC')).toEqual({ year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999 });
  });
});
