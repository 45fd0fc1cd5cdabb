/**
 * The change log (tsdb/meta/change-log.ts): entries round-trip; a feed applies the other
 * writers' entries in order and skips its own; a missing entry is waited for, then taken
 * as "anything changed"; a series batch too big to list is logged by its metrics.
 */
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../core/api/bytes.js';
import { openMemoryStore } from '../../../core/index.js';
import type { Table } from '../../../core/api/store.js';
import {
  CHANGE_FAMILY, CHANGE_QUALIFIER, ChangeFeed, ChangeLog, GAP_WAIT_MS, MAX_LISTED_TSUIDS, MAX_LISTED_WRITTEN, SEQUENCE_FAMILY, SEQUENCE_ROW, WRITTEN_RETRY_MS,
  changeKey, changesTableSpec, decodeChange, encodeChange,
} from '../../../tsdb/meta/change-log.js';
import type { Change } from '../../../tsdb/meta/change-log.js';

const A = fromHex('00000000000000aa');
const B = fromHex('00000000000000bb');

async function table(): Promise<Table> {
  return (await openMemoryStore()).createTable(changesTableSpec());
}

function show(c: Change): string {
  switch (c.kind) {
    case 'series': case 'delete': return `${c.kind} ${c.tsuids.map(toHex).join(',')}`;
    case 'metrics': return `metrics ${c.metricUids.map(toHex).join(',')}`;
    case 'rename': return `rename ${c.uidKind} ${toHex(c.id)} ${c.from} -> ${c.to}`;
    case 'written': return `written ${c.series.map(([t, h]) => `${toHex(t)}@${h}`).join(',')}`;
    case 'writtenMetrics': return `writtenMetrics ${c.metrics.map(([m, h]) => `${toHex(m)}@${h}`).join(',')}`;
    case 'cleanup': return `cleanup ${c.step} ${c.pass} ${c.tsuids.map(toHex).join(',')} ${(['metric', 'tagk', 'tagv'] as const).map((k) => c.uids[k].map(toHex).join(',')).join(' ')}`;
    case 'unknown': return 'unknown';
  }
}

describe('change log', () => {
  it('encodes and decodes every kind of entry', () => {
    const cases: Exclude<Change, { kind: 'unknown' }>[] = [
      { kind: 'series', tsuids: [fromHex('000001000001000002'), fromHex('000002000001000003')] },
      { kind: 'metrics', metricUids: [fromHex('000007')] },
      { kind: 'rename', uidKind: 'tagv', id: fromHex('00002a'), from: 'web01', to: 'wéb-01' },
      { kind: 'delete', tsuids: [] },
      { kind: 'written', series: [[fromHex('000001000001000002'), 1_700_002_800], [fromHex('000002000001000003'), 0]] },
      { kind: 'writtenMetrics', metrics: [[fromHex('000007'), 4_294_963_200]] },
      { kind: 'cleanup', step: 2, pass: 7n, tsuids: [fromHex('000001000001000002')], uids: { metric: [], tagk: [fromHex('000001')], tagv: [fromHex('000002'), fromHex('000003')] } },
    ];
    for (const c of cases) {
      const d = decodeChange(encodeChange(A, c))!;
      expect(toHex(d.writer)).toBe(toHex(A));
      expect(show(d.change)).toBe(show(c));
    }
    expect(decodeChange(fromHex('7a00000000000000aa'))).toBeUndefined(); // unknown tag
    expect(decodeChange(encodeChange(A, cases[0]!).subarray(0, 20))).toBeUndefined(); // cut short
  });

  it('hands the other writers\' entries to each feed in order, never its own', async () => {
    const t = await table();
    const a = new ChangeLog(t, A, 3);
    const b = new ChangeLog(t, B, 3);
    await a.append({ kind: 'series', tsuids: [fromHex('000001000001000001')] }); // before the feed starts: not applied
    const seenByB: string[] = [];
    const feedB = new ChangeFeed(b, (c) => seenByB.push(show(c)));
    await feedB.start();
    await a.append({ kind: 'series', tsuids: [fromHex('000001000001000002')] });
    await b.append({ kind: 'delete', tsuids: [fromHex('000001000001000002')] });
    await a.append({ kind: 'rename', uidKind: 'metric', id: fromHex('000001'), from: 'x', to: 'y' });
    await feedB.poll();
    expect(seenByB).toEqual(['series 000001000001000002', 'rename metric 000001 x -> y']);
    await feedB.poll();
    expect(seenByB).toHaveLength(2);
    expect(feedB.stats()).toMatchObject({ applied: 2, unknown: 0, errors: 0 });
  });

  it('logs a series batch too big to list by its metrics', async () => {
    const t = await table();
    const a = new ChangeLog(t, A, 3);
    const got: string[] = [];
    const feed = new ChangeFeed(new ChangeLog(t, B, 3), (c) => got.push(show(c)));
    await feed.start();
    const tsuids = Array.from({ length: MAX_LISTED_TSUIDS + 1 }, (_, i) => fromHex(`00000${1 + (i % 2)}000001${i.toString(16).padStart(6, '0')}`));
    await a.append({ kind: 'series', tsuids });
    await feed.poll();
    expect(got).toEqual(['metrics 000001,000002']);
  });

  it('coalesces points-written announcements: one entry in flight, the rest in the next, newest hour kept', async () => {
    const t = await table();
    const a = new ChangeLog(t, A, 3);
    const got: string[] = [];
    const feed = new ChangeFeed(new ChangeLog(t, B, 3), (c) => got.push(show(c)));
    await feed.start();
    const k = (hex: string): string => Buffer.from(fromHex(hex)).toString('latin1');
    await Promise.all([
      a.appendWritten([[k('000001000001000001'), 3600]]),
      a.appendWritten([[k('000001000001000002'), 7200], [k('000001000001000001'), 0]]),
      a.appendWritten([[k('000001000001000001'), 10800]]),
    ]);
    expect(a.appendedCount).toBe(2);
    await feed.poll();
    expect(got).toEqual(['written 000001000001000001@3600', 'written 000001000001000002@7200,000001000001000001@10800']);
    // Too many series to list: by metric, each with its newest hour.
    const many: Array<[string, number]> = Array.from({ length: MAX_LISTED_WRITTEN + 1 }, (_, i) => [k(`00000${1 + (i % 2)}000001${i.toString(16).padStart(6, '0')}`), i % 2 === 0 ? 3600 : i]);
    await a.appendWritten(many);
    await feed.poll();
    expect(got.at(-1)).toBe(`writtenMetrics 000001@3600,000002@${MAX_LISTED_WRITTEN - 1}`);
  });

  it('logs the points of a failed points-written append with the next one, or on its own soon after', async () => {
    const t = await table();
    let failures = 1;
    const flaky = Object.create(t, {
      increment: { value: (...args: Parameters<Table['increment']>) => (failures-- > 0 ? Promise.reject(new Error('unavailable')) : t.increment(...args)) },
    }) as Table;
    const a = new ChangeLog(flaky, A, 3);
    const got: string[] = [];
    const feed = new ChangeFeed(new ChangeLog(t, B, 3), (c) => got.push(show(c)));
    await feed.start();
    const k = Buffer.from(fromHex('000001000001000001')).toString('latin1');
    await expect(a.appendWritten([[k, 3600]])).rejects.toThrow('unavailable');
    await new Promise((r) => setTimeout(r, WRITTEN_RETRY_MS + 200));
    await feed.poll();
    expect(got).toEqual(['written 000001000001000001@3600']);
    // Closed: a failure is not retried.
    failures = 1;
    a.close();
    await expect(a.appendWritten([[k, 7200]])).rejects.toThrow('unavailable');
    await new Promise((r) => setTimeout(r, WRITTEN_RETRY_MS + 200));
    await feed.poll();
    expect(got).toHaveLength(1);
  });

  it('applies the entries after a missing one at once; the missing one when it comes, or "unknown" after GAP_WAIT_MS', async () => {
    const t = await table();
    let now = 1_000_000;
    const got: string[] = [];
    const feed = new ChangeFeed(new ChangeLog(t, B, 3), (c) => got.push(show(c)), () => now);
    await feed.start();
    const ref = { family: SEQUENCE_FAMILY, qualifier: CHANGE_QUALIFIER };
    const put = (seq: bigint, c: Exclude<Change, { kind: 'unknown' }>): Promise<void> =>
      t.mutate([{ key: changeKey(seq), mutations: [{ type: 'put', family: CHANGE_FAMILY, qualifier: CHANGE_QUALIFIER, value: encodeChange(A, c) }] }]);
    // A stalled writer took number 1 and has not written its entry; number 2 is written.
    const stalled = await t.increment(SEQUENCE_ROW, ref, 1n);
    await new ChangeLog(t, A, 3).append({ kind: 'delete', tsuids: [fromHex('000001000001000001')] });
    await feed.poll();
    expect(got).toEqual(['delete 000001000001000001']);
    // It writes its entry later: applied at the next poll, though the counter did not move.
    now += GAP_WAIT_MS - 1;
    await put(stalled, { kind: 'series', tsuids: [fromHex('000001000001000002')] });
    await feed.poll();
    expect(got).toEqual(['delete 000001000001000001', 'series 000001000001000002']);
    // A writer that died after taking number 3: number 4 goes through at once, 3 turns "unknown" after GAP_WAIT_MS.
    await t.increment(SEQUENCE_ROW, ref, 1n);
    await new ChangeLog(t, A, 3).append({ kind: 'delete', tsuids: [fromHex('000001000001000004')] });
    await feed.poll();
    expect(got.slice(2)).toEqual(['delete 000001000001000004']);
    now += GAP_WAIT_MS - 1;
    await feed.poll();
    expect(got.slice(3)).toEqual([]);
    now += 1;
    await feed.poll();
    expect(got.slice(3)).toEqual(['unknown']);
    // An entry that cannot be read is "unknown" too.
    const seq = await t.increment(SEQUENCE_ROW, ref, 1n);
    await t.mutate([{ key: changeKey(seq), mutations: [{ type: 'put', family: CHANGE_FAMILY, qualifier: CHANGE_QUALIFIER, value: fromHex('00') }] }]);
    await feed.poll();
    expect(got.slice(3)).toEqual(['unknown', 'unknown']);
    expect(feed.stats()).toMatchObject({ applied: 3, unknown: 2 });
    // Nothing is waited for any more: a poll with the counter unmoved reads nothing.
    const polls = feed.stats().polls;
    await feed.poll();
    expect(feed.stats().polls).toBe(polls + 1);
    expect(got).toHaveLength(5);
  });
  it('reserves a number before the change: announced late, the entry is appended again; abandoned, it changes nothing', async () => {
    const t = await table();
    let elapsed = 0;
    const a = new ChangeLog(t, A, 3, () => elapsed);
    const got: string[] = [];
    const feed = new ChangeFeed(new ChangeLog(t, B, 3), (c) => got.push(show(c)));
    await feed.start();
    const r1 = await a.reserve();
    elapsed += GAP_WAIT_MS / 2;
    await a.announce(r1, { kind: 'series', tsuids: [fromHex('000001000001000001')] });
    const r2 = await a.reserve();
    elapsed += GAP_WAIT_MS / 2 + 1; // a reader may have given up on it before the change was durable
    await a.announce(r2, { kind: 'series', tsuids: [fromHex('000001000001000002')] });
    await a.abandon(await a.reserve());
    await feed.poll();
    expect(got).toEqual(['series 000001000001000001', 'series 000001000001000002', 'series 000001000001000002', 'series ']);
    expect(await a.head()).toBe(4n);
    expect(feed.stats()).toMatchObject({ applied: 4, unknown: 0 });
  });
});
