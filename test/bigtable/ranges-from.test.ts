/**
 * The row set of each ReadRows page of a scan of several ranges (table-read.ts rangesFrom):
 * ranges already passed are left out (Bigtable refuses a range whose end is before its
 * start; the emulator reads it as empty), the one holding the last row read resumes after
 * it, the rest are sent whole; forward and reverse.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../core/api/bytes.js';
import { rangesFrom } from '../../backends/bigtable/src/table-read.js';

const r = (start: string, end: string) => ({ start: utf8(start), end: utf8(end) });
const text = (rs: ReturnType<typeof rangesFrom>) => rs?.map((x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, Buffer.from(v as Uint8Array).toString()])));
const RANGES = [r('b', 'd'), r('f', 'h'), r('k', '')];

describe('rangesFrom', () => {
  it('sends every range whole before the first row, and no row set for the whole table', () => {
    expect(text(rangesFrom(RANGES, undefined, false))).toEqual([
      { startKeyClosed: 'b', endKeyOpen: 'd' }, { startKeyClosed: 'f', endKeyOpen: 'h' }, { startKeyClosed: 'k' }]);
    expect(rangesFrom([r('', '')], undefined, false)).toBeUndefined();
    expect(rangesFrom([r('', '')], undefined, true)).toBeUndefined();
  });

  it('forward: leaves out the ranges passed, resumes after the last row inside one', () => {
    expect(text(rangesFrom(RANGES, utf8('c'), false))).toEqual([
      { startKeyOpen: 'c', endKeyOpen: 'd' }, { startKeyClosed: 'f', endKeyOpen: 'h' }, { startKeyClosed: 'k' }]);
    expect(text(rangesFrom(RANGES, utf8('g'), false))).toEqual([{ startKeyOpen: 'g', endKeyOpen: 'h' }, { startKeyClosed: 'k' }]);
    expect(text(rangesFrom(RANGES, utf8('h'), false))).toEqual([{ startKeyClosed: 'k' }]);
    expect(text(rangesFrom(RANGES, utf8('z'), false))).toEqual([{ startKeyOpen: 'z' }]);
    expect(rangesFrom([r('b', 'd')], utf8('d'), false)).toEqual([]);
  });

  it('reverse: leaves out the ranges passed, resumes before the last row inside one', () => {
    expect(text(rangesFrom(RANGES, utf8('m'), true))).toEqual([
      { startKeyClosed: 'b', endKeyOpen: 'd' }, { startKeyClosed: 'f', endKeyOpen: 'h' }, { startKeyClosed: 'k', endKeyOpen: 'm' }]);
    expect(text(rangesFrom(RANGES, utf8('g'), true))).toEqual([{ startKeyClosed: 'b', endKeyOpen: 'd' }, { startKeyClosed: 'f', endKeyOpen: 'g' }]);
    expect(text(rangesFrom(RANGES, utf8('f'), true))).toEqual([{ startKeyClosed: 'b', endKeyOpen: 'd' }]);
    expect(rangesFrom(RANGES, utf8('b'), true)).toEqual([]);
  });
});
