/**
 * The pure parts of the paced benchmarks (bench:live, bench:cardinality --churn): where
 * the clock offset puts the first hour boundary, how acknowledgements are split between
 * hour boundaries and elsewhere, and which host a churned slot holds.
 */
import { describe, expect, it } from 'vitest';
import { hostOfSlot } from '../../bench/live-client.js';
import type { Ack } from '../../bench/live-client.js';
import { ackStats, boundaryOffsetMs, codecBytesPerPoint } from '../../bench/peers/paced.js';

const H = 3_600_000;

describe('paced runs', () => {
  it('offsets the clock back by less than an hour so that a data hour starts afterSec into the run', () => {
    for (const now of [Date.UTC(2026, 11, 7, 15, 16, 40, 123), Date.UTC(2026, 11, 7, 15, 59, 30), Date.UTC(2026, 11, 7, 16, 0, 0)]) {
      const off = boundaryOffsetMs(now, 60);
      expect(off).toBeLessThanOrEqual(0);
      expect(off).toBeGreaterThan(-H);
      expect((now + 60_000 + off) % H).toBe(0);
    }
  });

  it('puts acks near a data or wall hour boundary apart from the rest, after the warm-up', () => {
    const start = Date.UTC(2026, 11, 7, 15, 0, 0) - 30_000; // 30 s before a wall hour
    const offset = -10 * 60_000; // the data clock is 10 min behind: its hour turns at 16:10
    const ack = (atSec: number, latencyMs: number, status = 204): Ack => ({ sentMs: atSec * 1000, latencyMs, lagMs: 0, dataSec: 0, status });
    const acks = [
      ack(1, 500), // warm-up, not near a boundary: left out
      ack(25, 40), ack(40, 60), // wall boundary [-10 s, +120 s) of 15:00 → 14:59:55, 15:00:10
      ack(300, 5), ack(400, 7), ack(500, 6), // elsewhere
      ack(3600 + 600 + 30 - 5, 90), // 16:09:55 data 15:59:55: near the data boundary
      ack(3600 + 600 + 30 + 130, 8), // 16:12:10: 130 s after the data hour turned: elsewhere
      ack(700, 999, 503), // failed
    ];
    const s = ackStats(acks, { startWallMs: start, clockOffsetMs: offset, beforeSec: 10, afterSec: 120, warmupSec: 10 });
    expect(s.wallBoundary.n).toBe(2);
    expect(s.wallBoundary.p99Ms).toBe(60);
    expect(s.dataBoundary.n).toBe(1);
    expect(s.dataBoundary.p99Ms).toBe(90);
    expect(s.elsewhere.n).toBe(4);
    expect(s.elsewhere.p50Ms).toBe(7);
    expect(s.p99AtBoundaryOverMedianElsewhere).toBeCloseTo(90 / 7, 3);
    expect(s.failed).toBe(1);
    // a longer warm-up takes the first boundary's first ack out of every figure
    const later = ackStats(acks, { startWallMs: start, clockOffsetMs: offset, beforeSec: 10, afterSec: 120, warmupSec: 30 });
    expect(later.wallBoundary.n).toBe(1);
    expect(later.elsewhere.n).toBe(4);
  });

  it('gives a churned slot a host never seen before, R slots a round, cyclically', () => {
    const a = 5;
    const r = 2;
    const seen = new Set<number>();
    for (let s = 0; s < a; s++) seen.add(hostOfSlot(s, a, r, 0));
    expect([...seen]).toEqual([0, 1, 2, 3, 4]);
    for (let round = 1; round <= 12; round++) {
      const now = Array.from({ length: a }, (_, s) => hostOfSlot(s, a, r, round));
      const before = Array.from({ length: a }, (_, s) => hostOfSlot(s, a, r, round - 1));
      const changed = now.filter((h, s) => h !== before[s]);
      expect(changed).toHaveLength(r);
      for (const h of changed) {
        expect(seen.has(h)).toBe(false);
        seen.add(h);
      }
    }
    expect(seen.size).toBe(a + 12 * r);
  });

  it("measures the codec's bytes/point for the paced data's shape", () => {
    const one = codecBytesPerPoint(1, 20);
    const ten = codecBytesPerPoint(10, 20);
    expect(one).toBeGreaterThan(0.5);
    expect(one).toBeLessThan(3);
    expect(ten).toBeGreaterThan(one);
  });
});
